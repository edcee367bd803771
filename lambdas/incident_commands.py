"""Incident commands over HTTP: create (idempotent), get, update, resolve, participants."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Header, Path
from aws_lambda_powertools.utilities.idempotency import idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)
from pydantic import BeforeValidator

from incidents.escalation.models import EscalateIncident, ReassignIncident
from incidents.incident import commands, participants
from incidents.incident import create as creating
from incidents.incident import escalate as escalation
from incidents.models import (
    INCIDENT_ID,
    PARTICIPANT_ID,
    Incident,
    IncidentSummary,
    NoteAdded,
    Participation,
)
from incidents.requests import AddNote, AddParticipant, CreateIncident, UpdateIncident
from incidents.store import Caller
from incidents.table import PK, SK
from lambdas.http.admission import caller
from lambdas.http.api import (
    answer,
    error_response,
    lambda_handler,
    new_resolver,
    no_content,
    route,
)
from lambdas.http.conditional import (
    IfMatch,
    NotModifiedError,
    entity_tags,
    if_match_version,
    if_none_match,
)
from lambdas.http.idempotency import ShardedIdempotencyStore, idempotency_config
from lambdas.http.link_pages import answer_link
from lambdas.runtime import dynamodb, logger, store, table_name

IncidentId = Annotated[str, Path(pattern=INCIDENT_ID)]
IdempotencyKey = Annotated[
    str | None, Header(alias="Idempotency-Key", min_length=1, max_length=128)
]

IDEMPOTENCY = idempotency_config()
_written: ContextVar[Incident | None] = ContextVar("written", default=None)
"""The incident this request's create wrote (a replay has none and reads it back)."""
IfNoneMatch = Annotated[
    str | None,
    if_none_match("the ETag of your copy: 304, no body, while the incident is unchanged"),
]
INCIDENT_NUMBER = re.compile(r"[1-9][0-9]{0,17}")
"""A positive decimal number, no sign, no leading zero (what ``#859`` means)."""
MAX_NUMBER = 10**18 - 1


def _decimal(value: object) -> object:
    """A path's number as `INCIDENT_NUMBER` writes it (int() would also take ``+1``,
    ``01`` or ``1_0``)."""
    if isinstance(value, str) and not INCIDENT_NUMBER.fullmatch(value):
        raise ValueError("must be a positive decimal number without leading zeros, e.g. 42")
    return value


def _key_reused(_: Exception) -> Response[str]:
    return error_response(
        409, "idempotency_key_reused", "this Idempotency-Key was used with another body"
    )


def _in_progress(_: Exception) -> Response[str]:
    return error_response(
        409, "request_in_progress", "a request with this Idempotency-Key is still running"
    )


app = new_resolver(
    [(IdempotencyValidationError, _key_reused), (IdempotencyAlreadyInProgressError, _in_progress)]
)


@route(app, "create_incident")
def create(
    body: CreateIncident,
    idempotency_key: IdempotencyKey = None,
) -> Response[Incident]:
    """Create an incident; with `Idempotency-Key`, a retry returns the incident the first
    request wrote (never a second one)."""
    incident = _created(caller(), body, idempotency_key)
    summary = incident.summary
    return answer(
        app, incident, status=201, etag=str(summary.version), location=f"/incidents/{summary.id}"
    )


def _created(who: Caller, body: CreateIncident, idempotency_key: str | None) -> Incident:
    if idempotency_key is None:
        return creating.create_incident(store(), who, body)
    _written.set(None)
    created = _keyed(_create, who, idempotency_key, body.model_dump(mode="json"))
    written = _written.get()
    if written is not None and written.summary.id == created["incident_id"]:
        return written
    return commands.get_incident(store(), who, created["incident_id"])  # a replay: as it is now


def _keyed(
    command: Callable[[dict[str, Any]], dict[str, Any]],
    who: Caller,
    key: str,
    body: dict[str, Any],
) -> dict[str, Any]:
    """`command` run once per (account, user, Idempotency-Key) with Powertools Idempotency."""
    request = {"account": who.account_id, "user": who.user_id, "key": key, "body": body}
    try:
        return _once(command)(request=request)
    except IdempotencyPersistenceLayerError:
        # The record could not be read or written (before or after the command ran): the
        # command's own guard still makes a second run return what the first one wrote.
        logger.warning("idempotency record unavailable; the command's guard decides")
        return command(request)


def _create(request: dict[str, Any]) -> dict[str, Any]:
    """The keyed create; its idempotency record keeps only the incident's id (a few bytes
    whatever the details, so saving it cannot fail on DynamoDB's 400 KB item limit)."""
    who = Caller(account_id=request["account"], user_id=request["user"])
    body = CreateIncident.model_validate(request["body"])
    created = creating.create_incident(store(), who, body, request_key=request["key"])
    _written.set(created)
    return {"incident_id": created.summary.id}


def _note(request: dict[str, Any]) -> dict[str, Any]:
    """The keyed note; its idempotency record keeps the event (under 4 KB)."""
    who = Caller(account_id=request["account"], user_id=request["user"])
    body = request["body"]
    note = AddNote.model_validate({"text": body["text"]})
    event = commands.add_note(store(), who, body["incident_id"], note, request_key=request["key"])
    return event.model_dump(mode="json", by_alias=True, exclude_none=True)


@functools.cache
def _once(command: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """`command` behind Powertools Idempotency, built on its first keyed call: the records'
    client is the container's shared one, and a cold start that serves none skips it."""
    records = ShardedIdempotencyStore(
        table_name=table_name(),
        key_attr=PK,
        sort_key_attr=SK,
        expiry_attr="ExpiresAt",
        boto3_client=dynamodb(),
    )
    once: Callable[..., dict[str, Any]] = idempotent_function(
        data_keyword_argument="request", persistence_store=records, config=IDEMPOTENCY
    )(command)
    return once


@route(app, "get_incident")
def get(incident_id: IncidentId, if_none_match: IfNoneMatch = None) -> Response[Incident]:
    """Summary, details and participants; its ETag names this state (If-None-Match: 304)."""
    return _current(caller(), incident_id, if_none_match)


def _current(who: Caller, incident_id: str, if_none_match: str | None) -> Response[Incident]:
    known = entity_tags(if_none_match)
    incident, tag = commands.get_incident_unless(store(), who, incident_id, known)
    if incident is None:
        raise NotModifiedError(tag)
    return answer(app, incident, etag=tag)


@route(app, "get_incident_by_number")
def get_by_number(
    number: Annotated[
        int,
        BeforeValidator(_decimal),
        Path(ge=1, le=MAX_NUMBER, description="the incident's number in the account, e.g. 42"),
    ],
    if_none_match: IfNoneMatch = None,
) -> Response[Incident]:
    """The same answer as GET /incidents/{incident_id}; the number costs one key read."""
    who = caller()
    return _current(who, commands.incident_id_by_number(store(), who, number), if_none_match)


@route(app, "update_incident")
def update(
    incident_id: IncidentId,
    body: UpdateIncident,
    if_match: IfMatch = None,
) -> Response[IncidentSummary]:
    """Change title, status or severity; `If-Match: <version>` makes it conditional (412)."""
    summary = commands.update_incident(
        store(), caller(), incident_id, body, if_match=if_match_version(if_match)
    )
    return answer(app, summary, etag=str(summary.version))


@route(app, "resolve_incident")
def resolve(incident_id: IncidentId) -> Response[IncidentSummary]:
    """Set the status to RESOLVED."""
    summary = commands.resolve_incident(store(), caller(), incident_id)
    return answer(app, summary, etag=str(summary.version))


@route(app, "escalate_incident")
def escalate(incident_id: IncidentId, body: EscalateIncident) -> Response[IncidentSummary]:
    """Page a level of the incident's escalation policy now (it starts over there; an
    acknowledged incident is triggered again)."""
    summary = escalation.escalate_incident(store(), caller(), incident_id, body)
    return answer(app, summary, etag=str(summary.version))


@route(app, "reassign_incident")
def reassign(incident_id: IncidentId, body: ReassignIncident) -> Response[IncidentSummary]:
    """Give the incident to another escalation policy: its level 1 is paged now (an
    acknowledged incident is triggered again)."""
    summary = escalation.reassign_incident(store(), caller(), incident_id, body)
    return answer(app, summary, etag=str(summary.version))


@route(app, "add_participant")
def add_participant(incident_id: IncidentId, body: AddParticipant) -> Response[Participation]:
    """Add a user or team, or another role to one already there."""
    added = participants.add_participant(store(), caller(), incident_id, body)
    return answer(app, added, etag=str(added.incident.version))


@route(app, "remove_participant")
def remove_participant(
    incident_id: IncidentId,
    participant_id: Annotated[str, Path(pattern=PARTICIPANT_ID)],
) -> Response[None]:
    """Remove a participant and all their roles."""
    participants.remove_participant(store(), caller(), incident_id, participant_id)
    return no_content()


@route(app, "add_note")
def add_note(
    incident_id: IncidentId,
    body: AddNote,
    idempotency_key: IdempotencyKey = None,
) -> Response[NoteAdded]:
    """Write a note on the incident's timeline; the answer is its ``note.added`` event.
    With `Idempotency-Key`, a retry returns the note the first request wrote."""
    who = caller()
    if idempotency_key is None:
        event = commands.add_note(store(), who, incident_id, body)
    else:
        keyed = {"incident_id": incident_id, "text": body.text}
        event = NoteAdded.model_validate(_keyed(_note, who, idempotency_key, keyed))
    return answer(app, event, status=201, location=f"/incidents/{incident_id}/timeline")


LinkToken = Annotated[str, Path(description="the link's token, from the page's message")]


@route(app, "page_link")
def page_link(token: LinkToken) -> Response[str]:
    """The incident a page's link is about, and a button for each action it can take
    (opening a link never acts: mail scanners open every link)."""
    return answer_link(token, None)


@route(app, "use_page_link")
def use_page_link(token: LinkToken) -> Response[str]:
    """The page's form posted: acknowledge or resolve, once, as the person paged."""
    return answer_link(token, app.current_event)


handler = lambda_handler(app, before=IDEMPOTENCY.register_lambda_context)
