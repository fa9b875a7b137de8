"""A client of the scheduler's JobService: submit, watch and export jobs.

    import herald
    c = herald.Client("127.0.0.1:7000", token_file="/etc/herald/token")
    job = c.submit("deploy/examples/wide_and_deep.txt")
    for status in c.watch(job):
        print(status.progress.iteration, status.progress.loss)
    c.export(job, "/models/ctr")

Every call has a deadline (`timeout` seconds; `watch` reconnects instead).
A failed call raises HeraldError with the gRPC status code's name and the
scheduler's message; a scheduler speaking another wire version raises
WireVersionError naming both releases, before any other call is made.
"""

import os
import time

import grpc
from google.protobuf import json_format, text_format

from herald import _version
from herald._proto import job_pb2, scheduler_pb2, scheduler_pb2_grpc
from herald.errors import HeraldError, WireVersionError

_TOKEN_KEY = "x-herald-token"
_TERMINAL = {
    scheduler_pb2.JOB_SUCCEEDED,
    scheduler_pb2.JOB_FAILED,
    scheduler_pb2.JOB_CANCELLED,
}


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _each_within(stream, seconds):
    """The messages of a response stream, each awaited at most `seconds`."""
    import queue
    import threading
    items = queue.Queue()

    def pump():
        try:
            for message in stream:
                items.put(("message", message))
            items.put(("end", None))
        except grpc.RpcError as e:
            items.put(("error", e))

    threading.Thread(target=pump, daemon=True).start()
    while True:
        try:
            kind, value = items.get(timeout=seconds)
        except queue.Empty:
            stream.cancel()
            raise HeraldError("DEADLINE_EXCEEDED", "no data for %.0f s" % seconds) from None
        if kind == "end":
            return
        if kind == "error":
            raise value
        yield value


def parse_spec(spec):
    """A JobSpec from a JobSpec, a text-format file path, or text-format text.

    A file's `data.schema_file` is read relative to the file's directory and
    put inline as `data.schema`, as `heraldctl submit` does.
    """
    if isinstance(spec, job_pb2.JobSpec):
        return spec
    base_dir = None
    text = spec
    if os.path.exists(spec):
        base_dir = os.path.dirname(os.path.abspath(spec))
        text = _read(spec).decode()
    message = job_pb2.JobSpec()
    try:
        text_format.Parse(text, message)
    except text_format.ParseError as e:
        raise HeraldError("INVALID_ARGUMENT", "job spec: %s" % e) from None
    schema_file = message.data.schema_file
    if schema_file:
        if message.data.HasField("schema"):
            raise HeraldError(
                "INVALID_ARGUMENT",
                "data.schema_file and data.schema: give the schema one way")
        path = schema_file
        if not os.path.isabs(path) and base_dir is not None:
            path = os.path.join(base_dir, path)
        try:
            text_format.Parse(_read(path).decode(), message.data.schema)
        except (OSError, text_format.ParseError) as e:
            raise HeraldError("INVALID_ARGUMENT",
                              "data.schema_file %s: %s" % (path, e)) from None
        message.data.ClearField("schema_file")
    return message


class Client:
    """JobService calls on one scheduler.

    address: "host:port". token / token_file: the cluster token (the file
    as herald_scheduler --token-file reads it). tls: None for plain text, or
    the path of the CA certificate (PEM) that signed the scheduler's.
    timeout: seconds each call may take.
    """

    def __init__(self, address, token=None, token_file=None, tls=None, timeout=30.0):
        if token is None and token_file is not None:
            token = _read(token_file).decode().strip()
        self._metadata = [(_TOKEN_KEY, token)] if token else []
        self._timeout = timeout
        self._address = address
        if tls:
            credentials = grpc.ssl_channel_credentials(root_certificates=_read(tls))
            self._channel = grpc.secure_channel(address, credentials)
        else:
            self._channel = grpc.insecure_channel(address)
        self._stub = scheduler_pb2_grpc.JobServiceStub(self._channel)
        self._checked = False

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ calls

    def _call(self, method, request, check=True):
        if check:
            self._check_version()
        try:
            return method(request, timeout=self._timeout, metadata=self._metadata)
        except grpc.RpcError as e:
            raise HeraldError(e.code().name, "%s (scheduler %s)" % (e.details(), self._address)) from None

    def _check_version(self):
        if self._checked:
            return
        response = self._call(self._stub.ListNodes, scheduler_pb2.ListNodesRequest(), check=False)
        if response.wire_version != _version.WIRE_VERSION:
            theirs = response.version or "a release before 0.29 (no version sent)"
            raise WireVersionError(
                "scheduler %s is herald %s speaking wire version %d; this package is herald %s "
                "speaking wire version %d" % (self._address, theirs, response.wire_version,
                                              _version.VERSION, _version.WIRE_VERSION))
        self._checked = True

    def submit(self, spec):
        """Submits a job (a JobSpec, a text-format file or text); returns its id."""
        request = scheduler_pb2.SubmitJobRequest(spec=parse_spec(spec))
        return self._call(self._stub.SubmitJob, request).job_id

    def status(self, job, spec=False):
        """The job's JobStatus message (with its resolved spec if `spec`)."""
        return self._one(job, include_spec=spec)

    def jobs(self):
        """Every job's JobStatus, newest last."""
        request = scheduler_pb2.JobStatusRequest()
        return list(self._call(self._stub.GetJobStatus, request).jobs)

    def _one(self, job, **include):
        request = scheduler_pb2.JobStatusRequest(job_id=job, **include)
        jobs = self._call(self._stub.GetJobStatus, request).jobs
        if not jobs:
            raise HeraldError("NOT_FOUND", "no job %s" % job)
        return jobs[0]

    def cancel(self, job):
        self._call(self._stub.CancelJob, scheduler_pb2.CancelJobRequest(job_id=job))

    def nodes(self):
        """The registered nodes (NodeStatus messages)."""
        return list(self._call(self._stub.ListNodes, scheduler_pb2.ListNodesRequest()).nodes)

    def export(self, job, out_dir, since=None):
        """Exports a succeeded job's model to `out_dir` (made absolute; the
        scheduler and the PS shards write it on their hosts). With `since`,
        an increment over that export. Returns the ExportJobResponse."""
        request = scheduler_pb2.ExportJobRequest(job_id=job, out_dir=os.path.abspath(out_dir))
        if since:
            request.since = os.path.abspath(since)
        return self._call(self._stub.ExportJob, request)

    def download_export(self, job, local_dir, remote_dir=None):
        """Copies an export of `job` from the scheduler's host into
        `local_dir` (created; must not hold an export yet): the one in
        `remote_dir` there, or the newest this scheduler process wrote.
        MODEL is written last, so a directory with MODEL is complete.
        Returns the remote directory. An increment's `base` still names the
        base on the scheduler's host: download it too and read the chain
        where both are. The stream has no overall deadline; each chunk must
        arrive within `timeout` seconds."""
        self._check_version()
        if os.path.exists(os.path.join(local_dir, "MODEL")):
            raise HeraldError("ALREADY_EXISTS", "%s already holds an export" % local_dir)
        request = scheduler_pb2.DownloadExportRequest(job_id=job, dir=remote_dir or "")
        remote = remote_dir
        path, out = None, None  # the file being written (as path + ".part")
        try:
            stream = self._stub.DownloadExport(request, metadata=self._metadata)
            for chunk in _each_within(stream, self._timeout):
                if chunk.dir:
                    remote = chunk.dir
                if out is None:
                    path = os.path.join(local_dir, chunk.file)
                    if not os.path.abspath(path).startswith(os.path.abspath(local_dir) + os.sep):
                        raise HeraldError("DATA_LOSS", "the scheduler sent a file outside the "
                                          "export: %s" % chunk.file)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    out = open(path + ".part", "wb")
                if out.tell() != chunk.offset or path != os.path.join(local_dir, chunk.file):
                    raise HeraldError("DATA_LOSS", "%s: a chunk at %d out of order" %
                                      (chunk.file, chunk.offset))
                out.write(chunk.data)
                if out.tell() == chunk.file_bytes:
                    out.close()
                    os.replace(path + ".part", path)
                    path, out = None, None
        except grpc.RpcError as e:
            raise HeraldError(e.code().name, "%s (scheduler %s)" % (e.details(), self._address)) from None
        finally:
            if out is not None:
                out.close()
        if not os.path.exists(os.path.join(local_dir, "MODEL")):
            raise HeraldError("DATA_LOSS", "the download of %s ended before MODEL" % remote)
        return remote

    def watch(self, job, reconnect_seconds=1.0, max_reconnects=60):
        """Yields the job's JobStatus on every change until it ends (the last
        one yielded is the final state). A broken stream is reopened, as
        `heraldctl watch` does, up to `max_reconnects` times in a row."""
        self._check_version()
        failures = 0
        while True:
            request = scheduler_pb2.WatchJobRequest(job_id=job)
            try:
                for status in self._stub.WatchJob(request, metadata=self._metadata):
                    failures = 0
                    yield status
                    if status.state in _TERMINAL:
                        return
                # The stream ended without a final state: ask once.
                status = self._one(job)
                if status.state in _TERMINAL:
                    yield status
                    return
            except grpc.RpcError as e:
                if e.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNAUTHENTICATED,
                                grpc.StatusCode.PERMISSION_DENIED,
                                grpc.StatusCode.INVALID_ARGUMENT):
                    raise HeraldError(e.code().name, e.details()) from None
                failures += 1
                if failures > max_reconnects:
                    raise HeraldError(e.code().name,
                                      "watch %s: %s (gave up after %d reconnects)" %
                                      (job, e.details(), max_reconnects)) from None
            time.sleep(reconnect_seconds)

    def wait(self, job):
        """Watches the job to its end; returns its final JobStatus."""
        last = None
        for last in self.watch(job):
            pass
        return last

    def history(self, job, numpy=False):
        """The job's history: a list of dicts (one per point, HistoryPoint's
        field names; a point of training has `workers`, one of an
        evaluation `eval_labels`, a list of dicts; `eval_auc` only where a
        binary label was judged; `eval_files` the files an evaluation of
        eval.each_file scored), or with `numpy` a dict of arrays by
        scalar field (NaN where a point lacks it)."""
        points = self._one(job, include_history=True).history
        rows = [json_format.MessageToDict(p, preserving_proto_field_name=True,
                                          including_default_value_fields=True)
                for p in points]
        for row, p in zip(rows, points):  # 64-bit integers as numbers, not strings
            for field in p.DESCRIPTOR.fields:
                if field.name in row and field.cpp_type in (field.CPPTYPE_INT64,
                                                            field.CPPTYPE_UINT64):
                    row[field.name] = int(row[field.name])
        if not numpy:
            return rows
        import numpy as np
        scalar = [f.name for f in scheduler_pb2.HistoryPoint.DESCRIPTOR.fields
                  if f.label != f.LABEL_REPEATED and f.message_type is None]
        return {name: np.array([float(r.get(name, np.nan)) for r in rows]) for name in scalar}
