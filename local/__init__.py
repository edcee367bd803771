"""`make dev`: DynamoDB Local (or moto), the local API (a front and gunicorn workers around
the real handlers), events out (the stream and queue pollers) and a webhook receiver."""
