"""Sign in to a deployed stage with SRP and print the ID token (``Authorization`` header).

The user pool client allows only SRP and refresh (no password is ever sent to Cognito, and
no administrator flow exists to misuse), so the AWS CLI, which cannot compute SRP, cannot
sign in; this does, through pycognito:

    SIGN_IN_PASSWORD='...' python -m tools.sign_in --user-pool-id POOL --client-id CLIENT \\
        --username alice@example.com

Without ``SIGN_IN_PASSWORD`` the password is asked for on the terminal.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from typing import Any

import boto3
from botocore.exceptions import ClientError
from pycognito.aws_srp import AWSSRP


def id_token(pool_id: str, client_id: str, username: str, password: str, client: Any) -> str:
    """The ID token of `username` after an SRP sign-in (`client`: a cognito-idp client)."""
    srp = AWSSRP(username, password, pool_id, client_id, client=client)
    tokens = srp.authenticate_user()
    return str(tokens["AuthenticationResult"]["IdToken"])


def main(argv: list[str] | None = None) -> int:
    """Print the ID token; a refused sign-in is one line on stderr and exit status 1."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--user-pool-id", required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--username", required=True)
    args = parser.parse_args(argv)
    password = os.environ.get("SIGN_IN_PASSWORD") or getpass.getpass("password: ")
    region = args.user_pool_id.split("_", 1)[0]
    client = boto3.client("cognito-idp", region_name=region)
    try:
        print(id_token(args.user_pool_id, args.client_id, args.username, password, client))
    except ClientError as error:
        print(f"sign-in refused: {error.response['Error']['Message']}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
