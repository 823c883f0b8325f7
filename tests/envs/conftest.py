"""The Docker engine fixture of the sandbox tests, for the corpus run on the docker backend."""

from tests.sandbox.conftest import docker_url

__all__ = ["docker_url"]
