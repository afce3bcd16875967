"""Real peer servers the project starts on loopback ports (nginx, caddy), under its own control."""
