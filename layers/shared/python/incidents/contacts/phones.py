"""Phone numbers as paging needs them: one E.164 form (``+14155552671``), whatever the
person typed, checked against the numbering plan of its country (`phonenumbers`, Google's
libphonenumber metadata), so a page never goes to a number that cannot exist."""

from __future__ import annotations

import phonenumbers

MAX_TYPED = 40
"""Characters of a number as typed (spaces, dashes, brackets): E.164 has at most 15 digits."""


def e164(address: str, country_code: int | None) -> tuple[str, int]:
    """`address` as E.164 and its country calling code: an international number
    (``+44 20 7946 0958``), or PagerDuty's national number with its `country_code`
    (``2079460958`` and 44). ValueError saying what is wrong."""
    typed = address.strip()
    if not typed.startswith("+"):
        if country_code is None:
            raise ValueError("give the number as E.164 (+14155552671) or give country_code")
        typed = f"+{country_code} {typed}"
    try:
        number = phonenumbers.parse(typed, None)
    except phonenumbers.NumberParseException as error:
        raise ValueError(f"not a phone number: {error}") from None
    if country_code is not None and number.country_code != country_code:
        raise ValueError(f"the number's country code is {number.country_code}, not {country_code}")
    if not phonenumbers.is_valid_number(number):
        raise ValueError(f"{typed} is not a valid number in its country's numbering plan")
    formatted = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return formatted, int(number.country_code or 0)
