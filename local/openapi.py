"""The API's OpenAPI document: the three handlers' generated documents merged into one.

``python -m local.openapi`` (``make openapi``) writes it to ``openapi.json``; a test
checks that the checked-in file is current. The local gateway serves it at
``/openapi.json`` and Swagger UI (shipped inside Powertools) at ``/docs``.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler.openapi.swagger_ui.html import generate_swagger_html

from lambdas.routes import Group
from local.clients import use_local_credentials

TITLE = "Incidents API"
VERSION = "1.0.0"
DOCUMENT = Path(__file__).resolve().parent.parent / "openapi.json"
SECURITY_SCHEME = {
    "cognito": {
        "type": "apiKey",
        "in": "header",
        "name": "Authorization",
        "description": "A Cognito ID token (locally: a dev token printed by make dev).",
    }
}


def openapi_document() -> dict[str, Any]:
    """Every route of every handler group, with shared components, in one document.

    Importing a handler module builds its clients (nothing is called), which needs a
    region and a table name; placeholders do when none is configured.
    """
    use_local_credentials()
    os.environ.setdefault("TABLE_NAME", "openapi")
    merged: dict[str, Any] = {}
    for group in Group:
        app = importlib.import_module(f"lambdas.{group.value}").app
        document = json.loads(app.get_openapi_json_schema(title=TITLE, version=VERSION))
        if not merged:
            merged = document
            continue
        for path, operations in document["paths"].items():
            merged["paths"].setdefault(path, {}).update(operations)
        merged["components"]["schemas"].update(document["components"]["schemas"])
    merged["paths"] = dict(sorted(merged["paths"].items()))
    merged["components"]["schemas"] = dict(sorted(merged["components"]["schemas"].items()))
    merged["components"]["securitySchemes"] = SECURITY_SCHEME
    merged["security"] = [{"cognito": []}]
    return merged


def openapi_json(document: dict[str, Any]) -> str:
    """`document` as written to ``openapi.json`` and served at ``/openapi.json``."""
    return json.dumps(document, indent=2) + "\n"


def swagger_page(document: dict[str, Any]) -> str:
    """Swagger UI for `document`, with Powertools' bundled assets inlined (works offline)."""
    assets = Path(generate_swagger_html.__code__.co_filename).parent
    return generate_swagger_html(
        spec=json.dumps(document),
        swagger_js=(assets / "swagger-ui-bundle.min.js").read_text(),
        swagger_css=(assets / "swagger-ui.min.css").read_text(),
        swagger_base_url="",
        oauth2_config=None,
        persist_authorization=True,
    )


def main() -> None:
    """Write ``openapi.json`` beside the README."""
    DOCUMENT.write_text(openapi_json(openapi_document()))
    print(f"wrote {DOCUMENT}", file=sys.stderr)


if __name__ == "__main__":
    main()
