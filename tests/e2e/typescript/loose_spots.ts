// Type-level assertions: what the generated types must refuse. `tsc` fails if a line under
// `@ts-expect-error` compiles, so each one proves a loose spot of the document is closed.
import type { components, paths } from "./generated/api.js";

type Schemas = components["schemas"];

export function requiredFields(incident: Schemas["Incident"], user: Schemas["User"]): void {
  const participants: Schemas["Participation"][] = incident.participants; // never undefined
  const email: string | null = user.email; // always present (null without one)
  const state: "OPEN" | "CLOSED" = incident.summary.state; // computed, always there
  void [participants, email, state];
}

// @ts-expect-error: an error code outside the documented ones
export const unknownCode: Schemas["ErrorBody"]["code"] = "no_such_code";
export const knownCode: Schemas["ErrorBody"]["code"] = "precondition_failed";

type ByNumber = paths["/incidents/by-number/{number}"]["get"];
// @ts-expect-error: the number is an integer, as IncidentSummary.number is
export const numberAsText: ByNumber["parameters"]["path"]["number"] = "42";
export const numberAsInteger: ByNumber["parameters"]["path"]["number"] = 42;

type MyTeams = paths["/me/teams"]["get"]["responses"];
// @ts-expect-error: GET /me/teams cannot answer 409 (only the statuses each route can answer)
export type MyTeamsConflict = MyTeams[409];
// @ts-expect-error: nor 412
export type MyTeamsPrecondition = MyTeams[412];
export type MyTeamsUnauthorized = MyTeams[401];

type Removed = paths["/incidents/{incident_id}/participants/{participant_id}"]["delete"]["responses"][204];
// @ts-expect-error: a 204 has no content to read
export type RemovedBody = Removed["content"]["application/json"];

type Got = paths["/incidents/{incident_id}"]["get"]["responses"];
export type GotEtag = Got[200]["headers"]["ETag"];
export type NotModified = Got[304];
type Throttled = paths["/me/incidents"]["get"]["responses"][429];
export type RetryAfter = Throttled["headers"]["Retry-After"];

// The event union (issue 40): one model with seven nullable fields needed a null check at
// every use; each kind now carries only its own fields, narrowed by `type`.
type Event = Schemas["TimelineEvent"];
export function narrowing(event: Event): string {
  // @ts-expect-error: a note is only on note.added, so it cannot be read before narrowing
  const early: string = event.note.text;
  void early;
  if (event.type === "note.added") {
    return event.note.text; // no null check: a note.added always has its note
  }
  if (event.type === "incident.updated") {
    // @ts-expect-error: a change names title, status and severity only
    void event.changes.bogus;
    // @ts-expect-error: a severity change carries severities, not statuses
    const wrong: "TRIGGERED" | null | undefined = event.changes.severity?.to;
    void wrong;
    return event.changes.status?.to ?? "unchanged";
  }
  if (event.type === "participant.added") {
    // @ts-expect-error: a participant event has no changes
    void event.changes;
    return event.participant.role;
  }
  return event.type;
}

// @ts-expect-error: a delivery's type is an event type or webhook.test, nothing else
export const deliveryType: Schemas["Delivery"]["type"] = "incident.deleted";
export const testDelivery: Schemas["Delivery"]["type"] = "webhook.test";

type Delivered = Schemas["EventPayload"];
// @ts-expect-error: a delivered event is a timeline event, never null
export const noEvent: Delivered["data"]["event"] = null;
