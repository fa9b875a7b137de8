"""Exceptions raised by the herald package."""


class HeraldError(Exception):
    """A call to the scheduler failed, or an export could not be read.

    `code` is the gRPC status code name ("NOT_FOUND", "UNAUTHENTICATED",
    "DEADLINE_EXCEEDED", ...) or "DATA_LOSS" / "INVALID_ARGUMENT" for a
    damaged or malformed export; `message` is the scheduler's (or the
    reader's) explanation.
    """

    def __init__(self, code, message):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message


class WireVersionError(HeraldError):
    """The scheduler speaks another wire version than this package."""

    def __init__(self, message):
        super().__init__("FAILED_PRECONDITION", message)
