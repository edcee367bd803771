"""What the tests share: the handlers behind API Gateway events, headless Chromium, webhook
deliveries, fan-out data, people, and the run's time table."""
