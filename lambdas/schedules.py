"""On-call schedules over HTTP, in PagerDuty's REST v2 names: schedules (create, list, read
rendered over a range, edit from a time on, delete, preview), their overrides, who is on
call (``/oncalls``, and one user's), calendar feeds (a schedule's, a user's) and the
escalation policies that page who is on call."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from incidents.escalation import policies
from incidents.escalation.models import (
    EscalationPolicy,
    EscalationPolicyList,
    EscalationPolicyRequest,
)
from incidents.models import (
    ESCALATION_POLICY_ID,
    FEED_TOKEN,
    OVERRIDE_ID,
    SCHEDULE_ID,
    USER_ID,
    TeamId,
    UserId,
)
from incidents.paging import DEFAULT_LIMIT
from incidents.requests import MAX_LIST
from incidents.schedules import commands, feeds
from incidents.schedules.models import (
    CalendarFeedUrls,
    OnCallList,
    OverrideList,
    OverrideRequest,
    Schedule,
    ScheduleChange,
    ScheduleList,
    ScheduleOverride,
    SchedulePreview,
    ScheduleRequest,
)
from incidents.schedules.models import ScheduleId as ScheduleIdValue
from incidents.schedules.oncalls import OnCallFilter, on_call
from incidents.schedules.rendering import asked_range, longest_range, preview
from incidents.users import get_profile
from lambdas.http.admission import caller
from lambdas.http.api import (
    answer,
    lambda_handler,
    new_resolver,
    no_content,
    public_url,
    route,
)
from lambdas.http.params import Cursor, Limit, instant_query, parse_instant
from lambdas.runtime import store

ScheduleId = Annotated[str, Path(pattern=SCHEDULE_ID)]
OverrideId = Annotated[str, Path(pattern=OVERRIDE_ID)]
PolicyId = Annotated[str, Path(pattern=ESCALATION_POLICY_ID)]
PathUserId = Annotated[str, Path(pattern=USER_ID)]
FeedToken = Annotated[str, Path(pattern=FEED_TOKEN, description="the feed's secret")]
CALENDAR = "text/calendar; charset=utf-8"
Since = Annotated[str | None, instant_query("from", "2026-03-01T00:00:00Z")]
Until = Annotated[str | None, instant_query("until", "2026-03-08T00:00:00Z")]

app = new_resolver()


def _ids(what: str) -> Query:
    """A list filter as PagerDuty's clients send it: ``schedule_ids[]=…`` repeated."""
    return Query(
        alias=f"{what}_ids[]",
        max_length=MAX_LIST,
        description=f"only these {what}s (repeat the parameter)",
    )


@route(app, "create_escalation_policy")
def create_escalation_policy(body: EscalationPolicyRequest) -> Response[EscalationPolicy]:
    """A new escalation policy, version 1."""
    created = policies.create_policy(store(), caller(), body)
    return answer(app, created, status=201, location=f"/escalation-policies/{created.id}")


@route(app, "list_escalation_policies")
def list_escalation_policies(
    *, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None
) -> EscalationPolicyList:
    """The account's escalation policies, by id."""
    return policies.list_policies(store(), caller(), limit=limit, cursor=cursor)


@route(app, "get_escalation_policy")
def get_escalation_policy(policy_id: PolicyId) -> EscalationPolicy:
    """An escalation policy."""
    return policies.get_policy(store(), caller(), policy_id)


@route(app, "replace_escalation_policy")
def replace_escalation_policy(
    policy_id: PolicyId, body: EscalationPolicyRequest
) -> EscalationPolicy:
    """The policy as the body has it, its version moved."""
    return policies.replace_policy(store(), caller(), policy_id, body)


@route(app, "delete_escalation_policy")
def delete_escalation_policy(policy_id: PolicyId) -> Response[None]:
    """Delete a policy that no integration names."""
    policies.delete_policy(store(), caller(), policy_id)
    return no_content()


@route(app, "create_schedule")
def create_schedule(body: ScheduleRequest) -> Response[Schedule]:
    """A new schedule, rendered over the coming week."""
    created = commands.create_schedule(store(), caller(), body)
    return answer(app, created, status=201, location=f"/schedules/{created.id}")


@route(app, "list_schedules")
def list_schedules(*, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None) -> ScheduleList:
    """The account's schedules, by id."""
    return commands.list_schedules(store(), caller(), limit=limit, cursor=cursor)


@route(app, "preview_schedule")
def preview_schedule(
    body: ScheduleRequest, *, since: Since = None, until: Until = None
) -> SchedulePreview:
    """A schedule rendered over [since, until) (the coming week) without saving it."""
    start, end = asked_range(
        parse_instant(since, "since"),
        parse_instant(until, "until"),
        store().clock(),
        longest_range(body.layers()),
    )
    return preview(body, [], start, end)


@route(app, "get_schedule")
def get_schedule(schedule_id: ScheduleId, *, since: Since = None, until: Until = None) -> Schedule:
    """A schedule rendered over [since, until) (the coming week): the final schedule, each
    layer and the overrides, at most 90 days."""
    return commands.get_schedule(
        store(), caller(), schedule_id, parse_instant(since, "since"), parse_instant(until, "until")
    )


@route(app, "update_schedule")
def update_schedule(schedule_id: ScheduleId, body: ScheduleChange) -> Schedule:
    """The schedule as the body has it from ``effective_at`` (now) on; before, unchanged."""
    return commands.update_schedule(store(), caller(), schedule_id, body)


@route(app, "delete_schedule")
def delete_schedule(schedule_id: ScheduleId) -> Response[None]:
    """Delete a schedule with its layers and overrides."""
    commands.delete_schedule(store(), caller(), schedule_id)
    return no_content()


@route(app, "create_override")
def create_override(schedule_id: ScheduleId, body: OverrideRequest) -> Response[ScheduleOverride]:
    """Someone on call in place of whoever the layers say, from start to end."""
    created = commands.create_override(store(), caller(), schedule_id, body)
    return answer(
        app, created, status=201, location=f"/schedules/{schedule_id}/overrides/{created.id}"
    )


@route(app, "list_overrides")
def list_overrides(
    schedule_id: ScheduleId, *, since: Since = None, until: Until = None
) -> OverrideList:
    """The schedule's overrides that meet [since, until), at most 90 days."""
    return commands.list_overrides(
        store(), caller(), schedule_id, parse_instant(since, "since"), parse_instant(until, "until")
    )


@route(app, "delete_override")
def delete_override(schedule_id: ScheduleId, override_id: OverrideId) -> Response[None]:
    """Delete an override not yet ended (one under way ends now)."""
    commands.delete_override(store(), caller(), schedule_id, override_id)
    return no_content()


@route(app, "list_oncalls")
def list_oncalls(
    *,
    since: Since = None,
    until: Until = None,
    earliest: Annotated[bool, Query(description="each user's earliest-ending entry only")] = False,
    schedule_ids: Annotated[list[ScheduleIdValue] | None, _ids("schedule")] = None,
    user_ids: Annotated[list[UserId] | None, _ids("user")] = None,
    team_ids: Annotated[list[TeamId] | None, _ids("team")] = None,
) -> OnCallList:
    """Who is on call now across the account (one read), or over [since, until)."""
    selected = OnCallFilter(
        frozenset(schedule_ids or ()), frozenset(user_ids or ()), frozenset(team_ids or ()),
        earliest,
    )  # fmt: skip
    return on_call(
        store(), caller(), selected, parse_instant(since, "since"), parse_instant(until, "until")
    )


@route(app, "user_oncalls")
def user_oncalls(user_id: PathUserId, *, since: Since = None, until: Until = None) -> OnCallList:
    """Where one user of the account is on call now, or over [since, until)."""
    get_profile(store(), caller(), user_id)  # 404 for a user the account does not have
    selected = OnCallFilter(user_ids=frozenset({user_id}))
    return on_call(
        store(), caller(), selected, parse_instant(since, "since"), parse_instant(until, "until")
    )


@route(app, "rotate_schedule_feed")
def rotate_schedule_feed(schedule_id: ScheduleId) -> CalendarFeedUrls:
    """A new secret URL of the schedule's calendar feed; the previous one stops working."""
    token = feeds.rotate_schedule_feed(store(), caller(), schedule_id)
    return _urls(app, f"/schedules/{schedule_id}/ical/{token}")


@route(app, "schedule_feed")
def schedule_feed(schedule_id: ScheduleId, token: FeedToken) -> Response[str]:
    """The schedule's shifts, a week back and 90 days on, as an iCalendar feed."""
    del token  # checked when the request was admitted: the caller is in its account
    return _calendar(feeds.schedule_feed(store(), caller().account_id, schedule_id))


@route(app, "rotate_user_feed")
def rotate_user_feed(user_id: PathUserId) -> CalendarFeedUrls:
    """A new secret URL of a user's calendar feed (theirs, or an owner's or admin's)."""
    token = feeds.rotate_user_feed(store(), caller(), user_id)
    return _urls(app, f"/users/{user_id}/ical/{token}")


@route(app, "user_feed")
def user_feed(user_id: PathUserId, token: FeedToken) -> Response[str]:
    """The user's shifts on every schedule, a week back and 90 days on, as a feed."""
    del token  # checked when the request was admitted
    return _calendar(feeds.user_feed(store(), caller().account_id, user_id))


def _urls(resolver: APIGatewayRestResolver, path: str) -> CalendarFeedUrls:
    return CalendarFeedUrls(
        http_cal_url=public_url(resolver, path), web_cal_url=public_url(resolver, path, "webcal")
    )


def _calendar(feed: bytes) -> Response[str]:
    """A feed as calendar apps fetch it: private (a URL is one subscriber's credential)."""
    return Response(
        status_code=200,
        content_type=CALENDAR,
        body=feed.decode(),
        headers={"Cache-Control": "private, max-age=300"},
    )


handler = lambda_handler(app)
