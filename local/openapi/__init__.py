"""The API's OpenAPI document, generated from the handlers (``make openapi``)."""
