"""Herald from Python: submit and watch jobs, read exported models.

    import herald
    client = herald.Client("127.0.0.1:7000", token_file="token")
    job = client.submit("job.txt")
    final = client.wait(job)
    client.export(job, "/models/ctr")
    model = herald.read_export("/models/ctr")

Pure Python over Debian's python3-grpcio, python3-protobuf and
python3-numpy (docs/python.md); herald.torch (an exported model as a
PyTorch module) also needs python3-torch.
"""

# From a build tree the generated modules are in bazel-bin/python/herald:
# every `herald` directory on sys.path is part of the package.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

from herald._version import VERSION as __version__, WIRE_VERSION
from herald.client import Client, parse_spec
from herald.errors import HeraldError, WireVersionError
from herald.export import Export, Table, read_export
from herald.predictions import Predictions, read_predictions

__all__ = [
    "Client",
    "Export",
    "HeraldError",
    "Table",
    "WIRE_VERSION",
    "WireVersionError",
    "Predictions",
    "parse_spec",
    "read_export",
    "read_predictions",
]
