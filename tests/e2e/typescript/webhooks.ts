// A webhook consumer typed from the document's components, run over the bodies a receiver
// got: every kind is read through its own fields with no null check and no cast, and a
// switch the compiler proves exhaustive. A field the type promises but a body lacks throws.
import { readFileSync } from "node:fs";
import type { components } from "./generated/api.js";

type Schemas = components["schemas"];
type Body = Schemas["EventPayload"] | Schemas["TestPayload"];
type Event = Schemas["AccountEvent"];

function describe(event: Event): string {
  switch (event.type) {
    case "incident.created":
      return `#${event.incident.number} ${event.incident.title}, ${event.participants.length} roles`;
    case "incident.updated":
    case "incident.resolved":
    case "incident.reopened": {
      const { title, status, severity } = event.changes;
      return [title?.to, status?.to, severity?.to].filter((to) => to !== null && to !== undefined).join(" ");
    }
    case "participant.added":
    case "participant.removed":
      return `${event.participant.participant_id} as ${event.participant.role}`;
    case "note.added":
      return event.note.text;
    case "alert.received":
      return `${event.alert.alerts} alerts of ${event.alert.dedup_key}: ${event.alert.summary}`;
    case "incident.escalated":
      return `${event.escalation.reassigned ? "reassigned" : "escalated"} to level ${event.escalation.level} of ${event.escalation.policy_id}`;
    case "escalation.level":
      return `level ${event.page.level} of ${event.page.policy_id} v${event.page.policy_version} paged ${event.page.user_id}`;
    case "notification.sent":
    case "notification.delivered":
    case "notification.failed":
      return `${event.notification.channel} to ${event.notification.user_id}: ${event.notification.reason ?? event.notification.message_id ?? "no id"}`;
    case "schedule.handoff":
      return `${event.schedule.name} v${event.schedule.version}: ${event.previous_user_id ?? "nobody"} to ${event.user_id ?? "nobody"} from ${event.shift_start}`;
    default: {
      const unknown: never = event;
      return unknown;
    }
  }
}

function read(body: Body): string {
  if (body.type === "webhook.test") {
    return `test ${body.data.webhook_id}`;
  }
  const incident = body.data.incident;
  return `${body.type}: ${describe(body.data.event)} (${incident === null ? "no summary" : incident.status})`;
}

const file = process.argv[2];
if (file === undefined) {
  throw new Error("usage: node build/webhooks.js bodies.json");
}
const bodies: Body[] = JSON.parse(readFileSync(file, "utf8"));
const lines = bodies.map(read);
console.log(JSON.stringify({ read: lines.length, lines }));
