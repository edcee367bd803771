"""The local DynamoDB engines (AWS DynamoDB Local, moto) and clients for them."""
