"""``make dev``: the real API on http://127.0.0.1:3000, against AWS DynamoDB Local (moto
where no Java 17+ runs, or ``DYNAMODB_ENDPOINT``), with deterministic demo data and dev tokens.

Settings (environment): ``PORT`` (3000), ``DYNAMODB_BACKEND`` (``dynamodb-local``, the
default, or ``moto``), ``DYNAMODB_DATA_DIR`` (keep DynamoDB Local's tables there across
restarts; default: in memory), ``DYNAMODB_ENDPOINT`` (a server of your own instead),
``TABLE_NAME`` (incidents-local), ``DEMO_INCIDENTS`` (2000), ``DEMO_ACCOUNTS`` (2),
``DEMO_SEED`` (7), ``DEMO_RESEED=1`` (write the demo data again into a table that holds it),
``CURSOR_SECRET`` (keeps cursors valid across restarts), ``DEV_TOKENS_FILE`` (also write the
dev tokens there as JSON), ``AWS_CALL_LOG`` (append every DynamoDB call a handler makes there, as
the IAM action and resource it needs, for the least-privilege tests).
"""

from __future__ import annotations

import importlib
import json
import os
import secrets
import signal
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from dynashard import error_code
from incidents.table import TABLE_SCHEMA
from lambdas.routes import Group
from local.call_log import CallFile, CallRecorder
from local.clients import create_table, local_client, use_local_credentials
from local.demo_data import DemoAccount, DemoSize, callers, prepare_demo
from local.embedded_dynamodb import Engine, backend_from_env, local_engine
from local.gateway import DRAIN_SECONDS, LocalGateway

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

DEFAULT_TABLE = "incidents-local"
CDK_JSON = Path(__file__).resolve().parents[1] / "cdk.json"


def ensure_table(client: DynamoDBClient, table_name: str) -> None:
    """Create the table from the shared schema unless it exists."""
    try:
        client.describe_table(TableName=table_name)
    except ClientError as error:
        if error_code(error) != "ResourceNotFoundException":
            raise
        create_table(client, TABLE_SCHEMA, table_name)


def configure_handlers(endpoint: str, table_name: str) -> None:
    """The environment the CDK stack gives the functions, pointed at the local server."""
    os.environ.update(
        {
            "TABLE_NAME": table_name,
            "DYNAMODB_ENDPOINT": endpoint,
            "CURSOR_SECRET": os.environ.get("CURSOR_SECRET") or secrets.token_urlsafe(48),
            "POWERTOOLS_SERVICE_NAME": "incidents",
            "POWERTOOLS_METRICS_NAMESPACE": "IncidentsLocal",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": os.environ.get("POWERTOOLS_LOG_LEVEL", "WARNING"),
            "CORS_ALLOWED_ORIGINS": os.environ.get("CORS_ALLOWED_ORIGINS")
            or json.dumps(dev_stage_origins()),
        }
    )


def dev_stage_origins() -> list[str]:
    """The browser origins the deployed dev stage allows (``cdk.json``), allowed locally too."""
    context = json.loads(CDK_JSON.read_text())["context"]
    origins: list[str] = context["stages"]["dev"].get("corsOrigins", [])
    return origins


def banner(url: str, engine: Engine, accounts: list[DemoAccount]) -> str:
    """What ``make dev`` prints: the URL, the engine, every dev token, and three curl commands."""
    lines = [
        f"Incidents API on {url}  (OpenAPI: {url}/openapi.json, Swagger UI: {url}/docs)",
        f"DynamoDB: {engine.description} at {engine.endpoint}",
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
    token = next(iter(first.tokens))
    team = first.teams[0].id
    auth = f'-H "Authorization: {token}"'
    example = {"title": "Checkout: 5xx spike", "severity": "SEV2", "teams": [team]}
    lists = f"{url}/me/teams/incidents?state=OPEN&limit=5"
    lines += [
        "",
        "Try (as the first user of the first account):",
        f"  curl -s -X POST {url}/incidents {auth} -H 'Content-Type: application/json' \\",
        f"    -d '{json.dumps(example)}'",
        f'  curl -s "{lists}" {auth}',
        f'  CURSOR=$(curl -s "{lists}" {auth} | python3 -c \'import json,sys; '
        'print(json.load(sys.stdin)["next_cursor"])\')',
        f'  curl -s "{lists}&cursor=$CURSOR" {auth}',
        "",
        "Ctrl-C stops everything.",
    ]
    return "\n".join(lines)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main() -> None:
    """Start the engine, seed, serve until Ctrl-C (or SIGTERM); stop promptly, quietly."""
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        with ExitStack() as stack:
            _serve(stack)
    except KeyboardInterrupt:  # during start-up, or a second Ctrl-C while stopping
        pass
    print("stopped", file=sys.stderr)


def _serve(stack: ExitStack) -> None:
    use_local_credentials()
    port = int(os.environ.get("PORT", "3000"))
    table_name = os.environ.get("TABLE_NAME", DEFAULT_TABLE)
    engine = _engine(stack)
    ensure_table(local_client(engine.endpoint), table_name)
    configure_handlers(engine.endpoint, table_name)
    runtime = importlib.import_module("lambdas.runtime")
    store = runtime.store()
    reseed = os.environ.get("DEMO_RESEED") == "1"
    accounts = prepare_demo(store, DemoSize.from_env(), reseed=reseed)
    handlers = {g: importlib.import_module(f"lambdas.{g.value}").handler for g in Group}
    gateway = LocalGateway(("127.0.0.1", port), handlers, callers(accounts))
    stack.callback(gateway.server_close)
    stack.callback(store.engine.close, wait=False)  # runs first: cancel queued reads
    call_log = os.environ.get("AWS_CALL_LOG")
    if call_log:  # the least-privilege tests read what each handler group called
        recorder = CallRecorder(table_name, lambda: gateway.serving, CallFile(Path(call_log)))
        recorder.attach(runtime.dynamodb())
    url = f"http://127.0.0.1:{gateway.server_address[1]}"
    tokens_file = os.environ.get("DEV_TOKENS_FILE")
    if tokens_file:
        Path(tokens_file).write_text(json.dumps(_tokens(accounts, url), indent=2))
    print(banner(url, engine, accounts), flush=True)
    try:
        gateway.serve_forever()
    except KeyboardInterrupt:
        print("\nstopping", file=sys.stderr, flush=True)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # one Ctrl-C stops; more do not interrupt
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        gateway.drain(DRAIN_SECONDS)  # then the stack cancels queued reads, stops the engine


def _engine(stack: ExitStack) -> Engine:
    """``DYNAMODB_ENDPOINT`` if set, else the chosen local engine (moto where Java is missing)."""
    endpoint = os.environ.get("DYNAMODB_ENDPOINT")
    if endpoint:
        return Engine("external", "your server (DYNAMODB_ENDPOINT)", endpoint)
    data_dir = os.environ.get("DYNAMODB_DATA_DIR")
    return stack.enter_context(
        local_engine(
            backend_from_env(), fallback=True, data_dir=Path(data_dir) if data_dir else None
        )
    )


def _tokens(accounts: list[DemoAccount], url: str) -> dict[str, object]:
    return {
        "url": url,
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
