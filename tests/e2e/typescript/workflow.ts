// The workflow a front-end runs, through openapi-fetch with the types openapi-typescript
// generated from the served document: compiled with `tsc --strict`, no casts. Every check
// that fails throws; the last line printed is a JSON summary the pytest side reads.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api.js";

type ErrorBody = components["schemas"]["ErrorBody"];
type Incident = components["schemas"]["Incident"];

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const api = env("API");
const team = env("TEAM");
const colleague = env("COLLEAGUE");
const client = createClient<paths>({ baseUrl: api, headers: { Authorization: env("TOKEN") } });
const checks: string[] = [];

function check(name: string, ok: boolean, detail?: unknown): void {
  if (!ok) throw new Error(`${name}: ${JSON.stringify(detail)}`);
  checks.push(name);
}

function expectError(name: string, status: number, error: ErrorBody | undefined, response: Response, code: ErrorBody["code"]): void {
  check(name, response.status === status && error?.code === code && typeof error.message === "string", { status: response.status, error });
}

async function createTwice(): Promise<Incident> {
  const body = { title: "Checkout: 5xx spike", severity: "SEV2" as const, teams: [team], assignees: [colleague] };
  const key = `ts-${Date.now()}`;
  const first = await client.POST("/incidents", { body, params: { header: { "idempotency-key": key } } });
  const again = await client.POST("/incidents", { body, params: { header: { "idempotency-key": key } } });
  if (!first.data || !again.data) throw new Error(`create: ${JSON.stringify(first.error ?? again.error)}`);
  check("create answers 201 with Location", first.response.status === 201 && first.response.headers.get("Location") === `/incidents/${first.data.summary.id}`);
  check("a retried key answers the same incident", again.data.summary.id === first.data.summary.id);
  const reused = await client.POST("/incidents", { body: { ...body, title: "other" }, params: { header: { "idempotency-key": key } } });
  expectError("a key reused with another body is 409", 409, reused.error, reused.response, "idempotency_key_reused");
  return first.data;
}

async function readIt(created: Incident): Promise<string> {
  const id = created.summary.id;
  const got = await client.GET("/incidents/{incident_id}", { params: { path: { incident_id: id } } });
  const etag = got.response.headers.get("ETag");
  check("get by id", got.data?.summary.id === id && got.data.participants.length === 3 && etag !== null, got.error);
  const byNumber = await client.GET("/incidents/by-number/{number}", { params: { path: { number: created.summary.number } } });
  check("get by number (an integer)", byNumber.data?.summary.id === id, byNumber.error);
  const same = await client.GET("/incidents/{incident_id}", { params: { path: { incident_id: id }, header: { "if-none-match": etag ?? "" } } });
  check("If-None-Match with the ETag is a 304", same.response.status === 304 && same.data === undefined);
  const missing = await client.GET("/incidents/{incident_id}", { params: { path: { incident_id: "inc_2J9dTn4Qb1ZkN0aH7cV3mXyPqLs" } } });
  expectError("an unknown incident is 404", 404, missing.error, missing.response, "not_found");
  return etag ?? "";
}

async function pageToTheEnd(): Promise<number> {
  let cursor: string | undefined;
  let seen = 0;
  for (let page = 0; page < 100; page++) {
    const { data, error } = await client.GET("/me/teams/incidents", { params: { query: { state: "OPEN", limit: 100, ...(cursor ? { cursor } : {}) } } });
    if (!data) throw new Error(`page: ${JSON.stringify(error)}`);
    seen += data.items.length;
    if (!data.has_more || data.next_cursor === null) return seen;
    cursor = data.next_cursor;
  }
  throw new Error("more than 100 pages");
}

async function filters(): Promise<void> {
  const { data, error } = await client.GET("/me/teams/incidents", {
    params: { query: { team: [team], status: ["TRIGGERED"], severity: ["SEV2"], since: "2026-01-01T00:00:00Z", until: "2100-01-01T00:00:00Z", limit: 25 } },
  });
  check("filters", data !== undefined && data.items.every((item) => item.status === "TRIGGERED" && item.severity === "SEV2"), error);
  const big = await client.GET("/me/incidents", { params: { query: { limit: 1000 } } });
  expectError("a limit above the documented maximum is 400", 400, big.error, big.response, "validation_error");
  const foreign = await client.GET("/me/teams/incidents", { params: { query: { team: ["team_2J9dTn4Qb1ZkN0aH7cV3mXyPqLs"] } } });
  expectError("a team that is not mine is 403", 403, foreign.error, foreign.response, "forbidden");
}

async function change(id: string, etag: string): Promise<void> {
  const path = { incident_id: id };
  const updated = await client.PATCH("/incidents/{incident_id}", { params: { path, header: { "if-match": etag } }, body: { status: "ACKNOWLEDGED" } });
  check("update with If-Match from the ETag", updated.data?.status === "ACKNOWLEDGED" && updated.response.headers.get("ETag") === '"2"', updated.error);
  const stale = await client.PATCH("/incidents/{incident_id}", { params: { path, header: { "if-match": etag } }, body: { severity: "SEV1" } });
  expectError("a stale If-Match is 412", 412, stale.error, stale.response, "precondition_failed");
  const added = await client.POST("/incidents/{incident_id}/participants", { params: { path }, body: { participant_id: colleague, role: "responder" } });
  check("add a participant", added.data?.roles.includes("responder") === true, added.error);
  const removed = await client.DELETE("/incidents/{incident_id}/participants/{participant_id}", { params: { path: { ...path, participant_id: colleague } } });
  check("remove a participant: 204", removed.response.status === 204 && removed.error === undefined);
  const note = await client.POST("/incidents/{incident_id}/notes", { params: { path }, body: { text: "Rolled back deploy 4812" } });
  check("a note: 201 with Location", note.response.status === 201 && note.response.headers.get("Location") === `/incidents/${id}/timeline`, note.error);
  const huge = await client.POST("/incidents", { body: { title: "too big", details: { notes: "x".repeat(400_000) } } });
  expectError("details above the limit are 413", 413, huge.error, huge.response, "payload_too_large");
  const resolved = await client.POST("/incidents/{incident_id}/resolve", { params: { path } });
  check("resolve", resolved.data?.status === "RESOLVED" && resolved.data.state === "CLOSED", resolved.error);
  const timeline = await client.GET("/incidents/{incident_id}/timeline", { params: { path } });
  check("the timeline tells the story", timeline.data?.items.map((event) => event.type).join(",") === "incident.created,incident.updated,participant.added,participant.removed,note.added,incident.resolved", timeline.data);
  const timelineTag = timeline.response.headers.get("ETag") ?? "";
  const unchanged = await client.GET("/incidents/{incident_id}/timeline", { params: { path, header: { "if-none-match": timelineTag } } });
  check("a timeline's first page with its ETag is a 304", timelineTag === '"6"' && unchanged.response.status === 304 && unchanged.data === undefined);
  const feed = await client.GET("/events", { params: { query: { limit: 5 } } });
  const feedTag = feed.response.headers.get("ETag") ?? "";
  const sameFeed = await client.GET("/events", { params: { query: { limit: 5 }, header: { "if-none-match": feedTag } } });
  check("/events' first page with its ETag is a 304", feed.data?.items[0]?.type === "incident.resolved" && feed.data.next_since === null && sameFeed.response.status === 304);
  const polled = await client.GET("/events", { params: { query: { order: "asc", since: "2026-01-01T00:00:00Z", limit: 100 } } });
  check("an oldest-first walk's last page names next_since", polled.data !== undefined && (polled.data.has_more || typeof polled.data.next_since === "string"), polled.error);
}

async function teams(): Promise<void> {
  const mine = await client.GET("/me/teams");
  check("my teams", mine.data?.items.some((item) => item.id === team) === true, mine.error);
  const created = await client.POST("/teams", { body: { name: `TS team ${Date.now()}` } });
  check("create a team: Location", created.data !== undefined && created.response.headers.get("Location") === `/teams/${created.data.id}`, created.error);
  const stranger = createClient<paths>({ baseUrl: api, headers: { Authorization: "dev-not-a-token" } });
  const refused = await stranger.GET("/me/teams");
  expectError("no valid token is 401", 401, refused.error, refused.response, "unauthorized");
}

const created = await createTwice();
const etag = await readIt(created);
const seen = await pageToTheEnd();
check("paged to the end", seen > 0);
await filters();
await change(created.summary.id, etag);
await teams();
console.log(JSON.stringify({ checks, seen }));
