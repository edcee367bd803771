"""Events out, locally: the queue and bus on moto (held to SQS's limits, kept on disk), the
event pipeline and its supervisor, and the simulated sender."""
