"""``make dev``: the real API on http://127.0.0.1:4000, against AWS DynamoDB Local (moto
where no Java 17+ runs, or ``DYNAMODB_ENDPOINT``), with deterministic demo data and dev tokens,
served by `DEV_CONCURRENCY` worker processes (`local.api.server`).

Settings (environment): ``PORT`` (4000; front-end dev servers keep 3000, 5173 and 8080),
``DEV_CONCURRENCY`` (worker processes, each one event at a time; default the cores, at
least 2), ``CORS_ALLOWED_ORIGINS`` (a JSON list; default the dev stage's origins and
localhost / 127.0.0.1 on ports 3000, 5173 and 8080), ``DYNAMODB_BACKEND`` (``dynamodb-local``, the
default, or ``moto``), ``DYNAMODB_DATA_DIR`` (keep DynamoDB Local's tables there across
restarts; default: in memory), ``DYNAMODB_ENDPOINT`` (a server of your own instead),
``TABLE_NAME`` (incidents-local), ``DEMO_INCIDENTS`` (1000), ``DEMO_ACCOUNTS`` (2),
``DEMO_SEED`` (7), ``DEMO_RESEED=1`` (write the demo data again into a table that holds it),
``DEMO_STAGE_COUNTS=1`` (seed the accounts at the stage's shard counts, as before the
per-account maps, instead of a new account's one shard a list),
``CURSOR_SECRET`` (keeps cursors valid across restarts), ``DEV_TOKENS_FILE`` (also write the
dev tokens there as JSON), ``AWS_CALL_LOG`` (append every DynamoDB call a handler makes there, as
the IAM action and resource it needs, for the least-privilege tests).
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import secrets
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import boto3
from botocore.exceptions import ClientError

from dynashard.throttling import error_code
from incidents.errors import NotFoundError
from incidents.incident.commands import get_incident, incident_id_by_number
from incidents.models import State
from incidents.store import Caller, Store, build_store
from incidents.table import TABLE_SCHEMA
from lambdas.routes import Group
from lambdas.settings import PUBLIC_API_URL, SettingsError, ShardSettings, allowed_origins
from local.api.call_log import CallFile, CallRecorder
from local.api.gateway import LocalGateway
from local.api.server import default_concurrency, serve
from local.demo.contacts import DemoContacts, demo_contacts
from local.demo.data import DemoAccount, DemoSize, callers, prepare_demo
from local.demo.integration import (
    DEMO_HEARTBEAT,
    DemoKey,
    DemoWindows,
    demo_api_key,
    demo_heartbeat,
    demo_integration,
    demo_paged_incident,
    demo_windows,
)
from local.demo.links import demo_link
from local.demo.policies import DemoPolicies, demo_policies
from local.demo.schedules import DemoSchedules, demo_schedules
from local.demo.webhooks import DemoWebhook, receiver_webhook
from local.engines.clients import create_table, local_client, use_local_credentials
from local.engines.embedded_dynamodb import MOTO, Engine, backend_from_env, local_engine
from local.engines.moto_server import MEMORY_CAP_MB, moto_server
from local.engines.slack import WEBHOOKS_PATH
from local.events.event_pipeline import record_calls
from local.events.messaging import REGION, Messaging, create_messaging
from local.events.queue_journal import QueueJournal
from local.events.supervised import SupervisedPipeline
from local.sweep_loop import sweep_loop
from local.webhook_receiver import RECEIVER_URL

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

DEFAULT_TABLE = "incidents-local"
DEFAULT_PORT = 4000
MOTO_DEMO_INCIDENTS = 100
"""On moto a create costs about 25-70 MB at 100 incidents, and more as the table grows."""
FRONT_END_ORIGINS = [
    f"http://{host}:{port}" for port in (3000, 5173, 8080) for host in ("localhost", "127.0.0.1")
]
"""Where browser apps are usually served in development (Next.js / CRA, Vite, Vue CLI)."""
CDK_JSON = Path(__file__).resolve().parents[1] / "cdk.json"


def ensure_table(client: DynamoDBClient, table_name: str) -> None:
    """Create the table from the shared schema unless it exists."""
    try:
        client.describe_table(TableName=table_name)
    except ClientError as error:
        if error_code(error) != "ResourceNotFoundException":
            raise
        create_table(client, TABLE_SCHEMA, table_name)


def handler_settings(table_name: str) -> dict[str, str]:
    """The environment the CDK stack gives the functions (the engine's endpoint is added
    once it runs); a malformed setting raises `SettingsError`, before anything starts."""
    settings = {
        "TABLE_NAME": table_name,
        "CURSOR_SECRET": os.environ.get("CURSOR_SECRET") or secrets.token_urlsafe(48),
        "POWERTOOLS_SERVICE_NAME": "incidents",
        "POWERTOOLS_METRICS_NAMESPACE": "IncidentsLocal",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
        "CORS_ALLOWED_ORIGINS": os.environ.get("CORS_ALLOWED_ORIGINS")
        or json.dumps(sorted({*dev_stage_origins(), *FRONT_END_ORIGINS})),
    }
    allowed_origins(settings)
    return settings


def dev_stage_origins() -> list[str]:
    """The browser origins the deployed dev stage allows (``cdk.json``), allowed locally too."""
    context = json.loads(CDK_JSON.read_text())["context"]
    origins: list[str] = context["stages"]["dev"].get("corsOrigins", [])
    return origins


def example_incident(store: Store, account: DemoAccount) -> str:
    """The examples' ``$INCIDENT``: the account's lowest-numbered open incident (the README
    acknowledges it, which must not reopen a resolved one), else its first (a few demo
    incidents may all be resolved)."""
    caller = Caller(account.account_id, account.users[0].id)
    first = incident = incident_id_by_number(store, caller, 1)
    number = 1
    while get_incident(store, caller, incident).summary.state is not State.OPEN:
        number += 1
        try:
            incident = incident_id_by_number(store, caller, number)
        except NotFoundError:  # past the last
            return first
    return incident


@dataclasses.dataclass(frozen=True)
class Examples:
    """What the examples name in the first demo account: an open incident, its webhook, an
    integration's key, an API key, its maintenance windows, its schedules, its escalation
    policies, its first user's contact methods and rules, and a page's link."""

    incident: str
    webhook: DemoWebhook
    integration: DemoKey
    api_key: DemoKey
    windows: DemoWindows
    schedules: DemoSchedules
    policies: DemoPolicies
    contacts: DemoContacts
    link: str
    """The token of a page's link to the demo incident."""
    paged: str
    """An incident the demo integration opened: it escalates by the demo policy."""


def example_variables(url: str, account: DemoAccount, examples: Examples) -> dict[str, str]:
    """The shell variables the README's and the docs' examples use, as ``make dev`` sets
    them: the first user of the first account, a team of theirs, an incident of theirs,
    their webhook to the local receiver and its secret, an integration and its key, an API
    key that reads incidents."""
    return {
        "API": url,
        "TOKEN": next(iter(account.tokens)),
        "TEAM": account.teams[0].id,
        "INCIDENT": examples.incident,
        "NUMBER": "1",
        "COLLEAGUE": account.users[1].id,
        "WEBHOOK": examples.webhook.id,
        "WEBHOOK_SECRET": examples.webhook.secret,
        "INTEGRATION": examples.integration.id,
        "INTEGRATION_KEY": examples.integration.key,
        "API_KEY": examples.api_key.key,
    }


ALERT = {
    "event_action": "trigger",
    "dedup_key": "db-1/disk",
    "payload": {"summary": "disk 95% full on db-1", "source": "db-1", "severity": "critical"},
}


def banner(
    url: str, engine: Engine, accounts: list[DemoAccount], workers: int, examples: Examples
) -> str:
    """What ``make dev`` prints: the URL, the engine, every dev token, the examples'
    variables and three curl commands."""
    lines = [
        f"Incidents API on {url}  (OpenAPI: {url}/openapi.json, Swagger UI: {url}/docs)",
        f"Concurrency: {workers} worker processes, one request at a time each (DEV_CONCURRENCY)",
        f"DynamoDB: {engine.description} at {engine.endpoint}",
        f"Browser origins allowed: {', '.join(allowed_origins(os.environ))}",
        "",
    ]
    for account in accounts:
        lines.append(f"account {account.account_id}")
        names = {user.id: user.name for user in account.users}
        lines += [
            f"  {names[user_id]:<14} {user_id}  token: {token}"
            for token, user_id in account.tokens.items()
        ]
    first = accounts[0]
    variables = example_variables(url, first, examples)
    token, team = variables["TOKEN"], variables["TEAM"]
    auth = f'-H "Authorization: {token}"'
    example = {"title": "Checkout: 5xx spike", "severity": "SEV2", "teams": [team]}
    lists = f"{url}/me/teams/incidents?state=OPEN&limit=5"
    lines += [
        "",
        "The examples in the README and the docs use these (paste them into your shell):",
        "  export " + " ".join(f"{name}={value}" for name, value in variables.items()),
        "",
        "Try (as the first user of the first account):",
        f"  curl -s -X POST {url}/incidents {auth} -H 'Content-Type: application/json' \\",
        f"    -d '{json.dumps(example)}'",
        f'  curl -s "{lists}" {auth}',
        f'  CURSOR=$(curl -s "{lists}" {auth} | python3 -c \'import json,sys; '
        'print(json.load(sys.stdin)["next_cursor"])\')',
        f'  curl -s "{lists}&cursor=$CURSOR" {auth}',
        "",
        "Webhooks (events out runs here too: table stream, publisher, FIFO queue, sender):",
        f"  each account has one to {RECEIVER_URL} for incident.resolved; the first's:",
        f"  make receiver SECRET={examples.webhook.secret}   # in another terminal, then:",
        f"  curl -s -X POST {url}/webhooks/{examples.webhook.id}/test {auth}",
        "",
        "Alerts in (the first account's integration, routed to its first team):",
        f"  curl -s -X POST {url}/alerts -H 'Authorization: Bearer {examples.integration.key}' \\",
        f"    -H 'Content-Type: application/json' -d '{json.dumps(ALERT)}'",
        f"  its incident pages the first user within a minute: see {url}/outbox",
        "  (every page emailed, texted or posted, newest first; JSON with Accept: "
        "application/json)",
        "  a Slack contact method may post to the Slack stand-in: "
        f"{os.environ.get('AWS_ENDPOINT_URL_SQS', '')}{WEBHOOKS_PATH}<any path>",
        "",
        "A machine (an API key of the first account, scope incidents:read):",
        f"  curl -s '{url}/incidents?state=OPEN&limit=5' "
        f"-H 'Authorization: Bearer {examples.api_key.key}'",
        "",
        "Ctrl-C stops everything.",
    ]
    return "\n".join(lines)


def main() -> None:
    """Start the engine, seed, serve until Ctrl-C (or SIGTERM); drain, stop quietly, exit 0."""
    signal.signal(signal.SIGTERM, _interrupt)  # until gunicorn's master takes the signals
    try:
        with ExitStack() as stack:
            _serve(stack)
    except KeyboardInterrupt:  # during start-up
        pass
    except SettingsError as error:
        print(f"make dev: {error}", file=sys.stderr)
        sys.exit(2)
    print("stopped", file=sys.stderr)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _serve(stack: ExitStack) -> None:
    use_local_credentials()
    workers = default_concurrency()
    port = int(os.environ.get("PORT", str(DEFAULT_PORT)))
    table_name = os.environ.get("TABLE_NAME", DEFAULT_TABLE)
    settings = handler_settings(table_name)
    clock = _Stopwatch()
    engine = _engine(stack)
    clock.lap("engine")
    client = local_client(engine.endpoint, max_pool_connections=16)  # seeding's writers too
    ensure_table(client, table_name)
    clock.lap("table")
    messaging = _messaging(stack)
    os.environ.update({**settings, **messaging.environment(), "DYNAMODB_ENDPOINT": engine.endpoint,
                       PUBLIC_API_URL: f"http://127.0.0.1:{port}"})  # fmt: skip
    shards = ShardSettings.from_environment(os.environ)  # as the handlers read them
    store = build_store(
        client,
        table_name,
        os.environ["CURSOR_SECRET"].encode(),
        config=shards.shard_config(),
        participant_policy=shards.participants(),
    )
    reseed = os.environ.get("DEMO_RESEED") == "1"
    accounts = prepare_demo(store, demo_size(engine), reseed=reseed)
    hooks = [receiver_webhook(store, account) for account in accounts]
    schedules = demo_schedules(store, accounts[0])
    policies = demo_policies(store, accounts[0], schedules.schedule)
    incident = example_incident(store, accounts[0])
    integration = demo_integration(store, accounts[0], policies.policy)
    examples = Examples(
        incident,
        hooks[0],
        integration,
        demo_api_key(store, accounts[0]),
        demo_windows(store, accounts[0]),
        schedules,
        policies,
        demo_contacts(store, accounts[0]),
        demo_link(store, accounts[0], incident, os.environ["CURSOR_SECRET"].encode()),
        demo_paged_incident(store, integration),
    )
    demo_heartbeat(store, accounts[0], examples.integration)
    store.engine.close()  # the master holds no threads or clients into the fork
    clock.lap("demo data")
    tokens = callers(accounts)
    stack.enter_context(event_pipeline())
    stack.enter_context(sweep_loop())

    def ready(url: str) -> None:
        tokens_file = os.environ.get("DEV_TOKENS_FILE")
        if tokens_file:
            listed = _tokens(accounts, url, example_variables(url, accounts[0], examples))
            Path(tokens_file).write_text(json.dumps(listed, indent=2))
        print(banner(url, engine, accounts, workers, examples), flush=True)
        print(f"started in {clock.summary()}", file=sys.stderr, flush=True)

    serve(lambda: worker_gateway(table_name, tokens, examples), ("127.0.0.1", port), workers, ready)


def _messaging(stack: ExitStack) -> Messaging:
    """The delivery queue and bus on moto; with ``DYNAMODB_DATA_DIR`` the queues are kept
    there (`local.events.queue_journal`) and what they held when ``make dev`` stopped is back."""
    data_dir = os.environ.get("DYNAMODB_DATA_DIR")
    journal = QueueJournal(Path(data_dir) / "queues.json") if data_dir else None
    endpoint = stack.enter_context(moto_server(after_sqs=journal.save if journal else None))
    messaging = create_messaging(endpoint)
    if journal is not None:
        sqs = boto3.client("sqs", endpoint_url=endpoint, region_name=REGION)
        restored = journal.restore(sqs)
        if restored:
            print(f"queues: {restored} messages kept from the last run", flush=True)
    return messaging


@contextmanager
def event_pipeline() -> Iterator[None]:
    """Events out beside the server, once it has taken its place on the stream, supervised
    (`local.events.supervised`): every change from then on goes out, through its restarts. With
    ``DYNAMODB_DATA_DIR`` its checkpoint is kept there, so the next ``make dev`` resumes
    where this one stopped."""
    data_dir = os.environ.get("DYNAMODB_DATA_DIR")
    with tempfile.TemporaryDirectory() as folder:
        checkpoint = Path(data_dir) / "event-pipeline-checkpoint.json" if data_dir else None
        pipeline = SupervisedPipeline(Path(folder), checkpoint)
        pipeline.start()
        try:
            yield
        finally:
            pipeline.stop()


def worker_gateway(
    table_name: str, tokens: dict[str, Caller], examples: Examples | None = None
) -> LocalGateway:
    """One worker's gateway: the handlers imported (the worker's cold start), and every
    DynamoDB call logged when ``AWS_CALL_LOG`` asks for it (the least-privilege tests).
    `examples` (a demo incident and webhook) are the served document's examples."""
    handlers = {g: importlib.import_module(f"lambdas.{g.value}").handler for g in Group}
    known = (
        {
            "incident_id": examples.incident,
            "webhook_id": examples.webhook.id,
            "integration_id": examples.integration.id,
            "routing_key": examples.integration.key,
            "key_id": examples.api_key.id,
            "name": DEMO_HEARTBEAT,
            "window_id": examples.windows.ongoing,
            "scheduled_window_id": examples.windows.scheduled,
            "schedule_id": examples.schedules.schedule,
            "scratch_schedule_id": examples.schedules.scratch,
            "override_id": examples.schedules.override,
            "schedule_feed_token": examples.schedules.schedule_feed,
            "user_feed_token": examples.schedules.user_feed,
            "page_link_token": examples.link,
            "paged_incident_id": examples.paged,
            "policy_id": examples.policies.policy,
            "scratch_policy_id": examples.policies.scratch,
            "me_user_id": examples.contacts.user_id,
            "contact_method_id": examples.contacts.method,
            "notification_rule_id": examples.contacts.rule,
            "scratch_contact_method_id": examples.contacts.scratch_method,
            "scratch_notification_rule_id": examples.contacts.scratch_rule,
            "verify_contact_method_id": examples.contacts.verify_method,
            "verification_code": examples.contacts.code,
            "resend_contact_method_id": examples.contacts.resend_method,
        }
        if examples
        else None
    )
    gateway = LocalGateway(handlers, tokens, known)
    call_log = os.environ.get("AWS_CALL_LOG")
    if call_log:
        recorder = CallRecorder(table_name, lambda: gateway.serving, CallFile(Path(call_log)))
        record_calls(recorder)
    return gateway


class _Stopwatch:
    """Where start-up time goes: named laps, printed once the server listens."""

    def __init__(self) -> None:
        self._start = self._last = time.perf_counter()
        self._laps: list[tuple[str, float]] = []

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self._laps.append((name, now - self._last))
        self._last = now

    def summary(self) -> str:
        total = time.perf_counter() - self._start
        laps = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self._laps)
        return f"{total:.1f} s ({laps}, server {total - sum(s for _, s in self._laps):.1f} s)"


def _engine(stack: ExitStack) -> Engine:
    """``DYNAMODB_ENDPOINT`` if set, else the chosen local engine (moto where Java is missing)."""
    endpoint = os.environ.get("DYNAMODB_ENDPOINT")
    if endpoint:
        return Engine("external", "your server (DYNAMODB_ENDPOINT)", endpoint)
    data_dir = os.environ.get("DYNAMODB_DATA_DIR")
    return stack.enter_context(
        local_engine(
            backend_from_env(),
            fallback=True,
            data_dir=Path(data_dir) if data_dir else None,
            moto_memory_cap_mb=MEMORY_CAP_MB,
        )
    )


def demo_size(engine: Engine) -> DemoSize:
    """The demo's size; on moto at most `MOTO_DEMO_INCIDENTS` incidents (each write
    transaction copies the whole table there), said in one line."""
    size = DemoSize.from_env()
    if engine.backend == MOTO and size.incidents > MOTO_DEMO_INCIDENTS:
        print(f"moto: demo data capped at {MOTO_DEMO_INCIDENTS} incidents", flush=True)
        return dataclasses.replace(size, incidents=MOTO_DEMO_INCIDENTS)
    return size


def _tokens(accounts: list[DemoAccount], url: str, variables: dict[str, str]) -> dict[str, object]:
    return {
        "url": url,
        "variables": variables,
        "accounts": [
            {
                "account_id": account.account_id,
                "teams": {team.id: account.members[team.id] for team in account.teams},
                "users": [
                    {"token": token, "user_id": user_id}
                    for token, user_id in account.tokens.items()
                ],
            }
            for account in accounts
        ],
    }


if __name__ == "__main__":
    main()
