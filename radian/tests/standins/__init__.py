"""Local stand-ins of the model providers' HTTP APIs, served on 127.0.0.1 for the real CLIs."""
