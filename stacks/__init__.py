"""CDK stacks. Nothing here ships to Lambda."""
