"""An item's update assembled from its owners' parts (`incidents.updates`)."""

from __future__ import annotations

from incidents.updates import UpdatePart, update_request

POSITION = UpdatePart(("#seq = :seq",), "#seq = :was", {"#seq": "seq"},
                      {":seq": {"N": "2"}, ":was": {"N": "1"}})  # fmt: skip
TYPED = UpdatePart(("#type = :type",), names={"#type": "Type"}, values={":type": {"S": "p"}})


def test_parts_join_their_clauses_and_and_their_conditions() -> None:
    counted = UpdatePart(("#i = :i",), "#i = :iwas", {"#i": "i"},
                         {":i": {"N": "5"}, ":iwas": {"N": "4"}})  # fmt: skip
    request = update_request("t", ("pk", "sk"), [TYPED, POSITION, counted])
    assert request["Key"] == {"PK": {"S": "pk"}, "SK": {"S": "sk"}}
    assert request["UpdateExpression"] == "SET #type = :type, #seq = :seq, #i = :i"
    assert request["ConditionExpression"] == "#seq = :was AND #i = :iwas"
    assert request["ExpressionAttributeNames"] == {"#type": "Type", "#seq": "seq", "#i": "i"}
    assert set(request["ExpressionAttributeValues"]) == {":type", ":seq", ":was", ":i", ":iwas"}


def test_parts_without_a_condition_write_unconditionally() -> None:
    request = update_request("t", ("pk", "sk"), [TYPED])
    assert "ConditionExpression" not in request
    assert request["UpdateExpression"] == "SET #type = :type"
