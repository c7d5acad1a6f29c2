"""Models in the loop: an OpenAI-compatible chat client with retries, cost and a replayable call log."""
