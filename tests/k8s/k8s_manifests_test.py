"""deploy/k8s rendered offline and checked against the binaries.

Every kustomization (the base and each overlay) is rendered with
`kubectl kustomize`. In what it renders:
  - every flag a container passes to herald_scheduler, herald_ps,
    herald_worker or heraldctl (in its command, its args, an `sh -c`
    script) is one the binary lists in its own --helpfull, so a renamed
    flag breaks this test (checked by renaming one);
  - every $(VAR) in args is an env var of that container;
  - every --scheduler=HOST:PORT is a Service HOST whose port PORT reaches
    the port the scheduler's pods --listen on; the PS Service and the
    probes reach the ports their processes listen on;
  - the ConfigMaps, Secrets and claims the pods mount are rendered or
    documented as created by hand (the token Secret);
  - the overlays do what they say: GPU workers in the base, CPU workers in
    overlays/cpu, one PodGroup of every long-running pod in overlays/gang,
    TLS flags on every process and TCP probes in overlays/tls.
No Kubernetes cluster runs here: nothing is applied.
"""

import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys

import yaml

RUNFILES = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
# kustomize does not follow the runfiles' symlinks: a real copy.
K8S = shutil.copytree(os.path.join(RUNFILES, "deploy", "k8s"),
                      os.path.join(os.environ["TEST_TMPDIR"], "k8s"), dirs_exist_ok=True)
BINARIES = {
    "herald_scheduler": "scheduler/herald_scheduler",
    "herald_ps": "ps_server/herald_ps",
    "herald_worker": "worker/herald_worker",
    "heraldctl": "cli/heraldctl",
}
# Secrets the operator creates (docs/operations.md, "On Kubernetes").
CREATED_BY_HAND = {("Secret", "herald-token"), ("Secret", "herald-tls")}
WORKLOADS = ("Deployment", "StatefulSet", "Job")
# Every kubectl at hand: the one on the PATH and Debian's 1.20 (its old
# kustomize), which deploy/install_deps.sh unpacks here when another kubectl
# is installed.
KUBECTL_1_20 = os.path.join(pwd.getpwuid(os.getuid()).pw_dir,
                            ".cache/herald/kubectl-1.20/usr/bin/kubectl")
KUBECTLS = ["kubectl"] + ([KUBECTL_1_20] if os.access(KUBECTL_1_20, os.X_OK) else [])

failures = []


def fail(where, what):
    failures.append(f"{where}: {what}")


def known_flags(binary):
    out = subprocess.run([os.path.join(RUNFILES, BINARIES[binary]), "--helpfull"],
                         capture_output=True, text=True, check=False)
    flags = set(re.findall(r"^\s+--(\w+) \(", out.stdout + out.stderr, re.M))
    if len(flags) < 5:
        raise SystemExit(f"{binary} --helpfull listed no flags:\n{out.stdout}{out.stderr}")
    return flags


FLAGS = {b: known_flags(b) for b in BINARIES}


def render(kustomization, kubectl="kubectl"):
    out = subprocess.run([kubectl, "kustomize", kustomization], capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{kubectl} kustomize {kustomization} failed:\n{out.stderr}")
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def without_generated_names(objs):
    """The objects as text, generated ConfigMap names (their hash suffix
    differs between kustomize versions) made equal."""
    text = yaml.safe_dump(sorted(objs, key=lambda o: (o["kind"], o["metadata"]["name"])))
    return re.sub(r"herald-job-[a-z0-9]{10}", "herald-job-HASH", text)


def pod_spec(obj):
    return obj["spec"]["template"]["spec"]


def words_of(container):
    """The container's command line as words: an `sh -c SCRIPT` split into
    the script's words; env values named *_CTL_FLAGS (heraldctl flags an
    overlay adds) as heraldctl's."""
    words = list(container.get("command", [])) + list(container.get("args", []))
    if words[:2] == ["/bin/sh", "-c"] and len(words) >= 3:
        words = shlex.split(words[2].replace("$(", "(").replace('"', " "), comments=True)
    for env in container.get("env", []):
        if env["name"].endswith("_CTL_FLAGS") and env.get("value"):
            words += ["heraldctl"] + shlex.split(env["value"])
    return words


def check_flags(where, container):
    binary = None
    for word in words_of(container):
        base = os.path.basename(word.strip("'\";"))
        if base in BINARIES:
            binary = base
            continue
        if not word.startswith("--") or binary is None:
            continue
        name = word[2:].split("=", 1)[0].replace("-", "_")
        flags = FLAGS[binary]
        if name not in flags and not (name.startswith("no") and name[2:] in flags):
            fail(where, f"{binary} has no flag --{name} (its --helpfull)")


def flag_value(container, binary, name):
    """--name=VALUE or --name VALUE that `container` passes to `binary`."""
    current, words = None, words_of(container)
    for i, word in enumerate(words):
        if os.path.basename(word) in BINARIES:
            current = os.path.basename(word)
        elif current == binary:
            key = word[2:].split("=", 1)[0].replace("-", "_")
            if word.startswith("--") and key == name:
                return word.split("=", 1)[1] if "=" in word else words[i + 1]
    return None


def main_binary(container):
    for word in words_of(container):
        if os.path.basename(word) in BINARIES:
            return os.path.basename(word)
    return None


def container_port(container, port):
    """A probe's or Service's port (a number or a port name) as a number."""
    if isinstance(port, int):
        return port
    for p in container.get("ports", []):
        if p.get("name") == port:
            return p["containerPort"]
    return None


def check_env_references(where, container):
    defined = {e["name"] for e in container.get("env", [])}
    for arg in container.get("args", []):
        for var in re.findall(r"\$\((\w+)\)", arg):
            if var not in defined:
                fail(where, f"$({var}) in {arg!r} is not an env var of the container")


def check_listen_and_probes(where, container):
    binary = main_binary(container)
    if binary is None or binary == "heraldctl":
        return
    listen = flag_value(container, binary, "listen")
    listen_port = int(listen.rsplit(":", 1)[1]) if listen else None
    metrics = flag_value(container, binary, "metrics_listen")
    metrics_port = int(metrics.rsplit(":", 1)[1]) if metrics else None
    if listen_port in (None, 0):
        fail(where, f"{binary} needs a fixed --listen port for its probes and Service")
    for kind in ("livenessProbe", "readinessProbe"):
        probe = container.get(kind)
        if probe is None:
            fail(where, f"no {kind}")
        elif "grpc" in probe:
            if container_port(container, probe["grpc"]["port"]) != listen_port:
                fail(where, f"{kind} checks gRPC port {probe['grpc']['port']}, "
                            f"{binary} listens on {listen_port}")
        elif "tcpSocket" in probe:
            if container_port(container, probe["tcpSocket"]["port"]) != listen_port:
                fail(where, f"{kind} connects to port {probe['tcpSocket']['port']}, "
                            f"{binary} listens on {listen_port}")
        elif "httpGet" in probe:
            if container_port(container, probe["httpGet"]["port"]) != metrics_port:
                fail(where, f"{kind} gets port {probe['httpGet']['port']}, "
                            f"the metrics listen on {metrics_port}")
    resources = container.get("resources", {})
    if not resources.get("requests") or not resources.get("limits"):
        fail(where, "no resource requests and limits")


def matches(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def check_services(name, objs):
    services = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Service"}
    workloads = [o for o in objs if o["kind"] in WORKLOADS]
    for w in workloads:
        for c in pod_spec(w)["containers"]:
            scheduler = flag_value(c, main_binary(c), "scheduler")
            if scheduler is None:
                continue
            where = f"{name} {w['kind']}/{w['metadata']['name']}"
            host, port = scheduler.rsplit(":", 1)
            svc = services.get(host)
            if svc is None:
                fail(where, f"--scheduler={scheduler}: no Service {host}")
                continue
            reached = False
            for p in svc["spec"]["ports"]:
                if p["port"] != int(port):
                    continue
                for target in workloads:
                    labels = target["spec"]["template"]["metadata"].get("labels", {})
                    if not matches(svc["spec"]["selector"], labels):
                        continue
                    for tc in pod_spec(target)["containers"]:
                        listen = flag_value(tc, "herald_scheduler", "listen")
                        number = container_port(tc, p.get("targetPort", p["port"]))
                        if listen and number == int(listen.rsplit(":", 1)[1]):
                            reached = True
            if not reached:
                fail(where, f"--scheduler={scheduler}: Service {host} port {port} does not "
                            "reach a herald_scheduler --listen port")
    # A Service of each component reaches its processes' --listen port.
    for svc in services.values():
        for target in workloads:
            labels = target["spec"]["template"]["metadata"].get("labels", {})
            if not matches(svc["spec"]["selector"], labels):
                continue
            for tc in pod_spec(target)["containers"]:
                binary = main_binary(tc)
                listen = flag_value(tc, binary, "listen") if binary else None
                if not listen:
                    continue
                listen_port = int(listen.rsplit(":", 1)[1])
                grpc = [p for p in svc["spec"]["ports"] if p["name"] == "grpc"]
                if not grpc or container_port(tc, grpc[0].get("targetPort")) != listen_port:
                    fail(f"{name} Service/{svc['metadata']['name']}",
                         f"its grpc port does not reach {binary}'s --listen port {listen_port}")


def check_references(name, objs):
    rendered = {(o["kind"], o["metadata"]["name"]) for o in objs} | CREATED_BY_HAND
    for w in (o for o in objs if o["kind"] in WORKLOADS):
        spec = pod_spec(w)
        templates = {t["metadata"]["name"]
                     for t in w["spec"].get("volumeClaimTemplates", [])}
        where = f"{name} {w['kind']}/{w['metadata']['name']}"
        for v in spec.get("volumes", []):
            if "secret" in v and ("Secret", v["secret"]["secretName"]) not in rendered:
                fail(where, f"Secret {v['secret']['secretName']} is neither rendered nor "
                            "created by hand")
            if "configMap" in v and ("ConfigMap", v["configMap"]["name"]) not in rendered:
                fail(where, f"ConfigMap {v['configMap']['name']} is not rendered")
            claim = v.get("persistentVolumeClaim", {}).get("claimName")
            if claim and ("PersistentVolumeClaim", claim) not in rendered:
                fail(where, f"claim {claim} is not rendered")
        volumes = {v["name"] for v in spec.get("volumes", [])} | templates
        for c in spec["containers"]:
            for m in c.get("volumeMounts", []):
                if m["name"] not in volumes:
                    fail(where, f"mounts {m['name']}, which is no volume")


def check(name, objs):
    for w in (o for o in objs if o["kind"] in WORKLOADS):
        for c in pod_spec(w)["containers"]:
            where = f"{name} {w['kind']}/{w['metadata']['name']}/{c['name']}"
            check_flags(where, c)
            check_env_references(where, c)
            if w["kind"] != "Job":
                check_listen_and_probes(where, c)
    check_services(name, objs)
    check_references(name, objs)


def find(objs, kind, name):
    for o in objs:
        if o["kind"] == kind and o["metadata"]["name"] == name:
            return o
    raise SystemExit(f"no {kind}/{name} rendered")


def worker_container(objs):
    return pod_spec(find(objs, "StatefulSet", "herald-worker"))["containers"][0]


def main():
    rendered = {}
    for name in ("base", "overlays/cpu", "overlays/gang", "overlays/tls"):
        rendered[name] = render(os.path.join(K8S, name))
        check(name, rendered[name])
        print(f"{name}: {len(rendered[name])} objects rendered and checked")
        for other in KUBECTLS[1:]:
            if without_generated_names(render(os.path.join(K8S, name), other)) != \
                    without_generated_names(rendered[name]):
                fail(name, f"{other} renders other objects than kubectl")
            else:
                print(f"{name}: {other} renders the same objects")
    if len(KUBECTLS) == 1:
        print("NOTE: only the kubectl on the PATH rendered the manifests: "
              "deploy/install_deps.sh unpacks Debian's 1.20 for this test")

    base, cpu, gang = rendered["base"], rendered["overlays/cpu"], rendered["overlays/gang"]
    w = worker_container(base)
    if flag_value(w, "herald_worker", "device") != "cuda:0" or \
            w["resources"]["limits"].get("nvidia.com/gpu") != 1:
        fail("base", "workers are not one GPU each")
    w = worker_container(cpu)
    if flag_value(w, "herald_worker", "device") != "cpu" or \
            "nvidia.com/gpu" in w["resources"].get("limits", {}) or \
            "nvidia.com/gpu" in w["resources"].get("requests", {}):
        fail("overlays/cpu", "workers still ask for a GPU or a CUDA device")
    group = find(gang, "PodGroup", "herald")
    members = 0
    for kind, obj_name in (("Deployment", "herald-scheduler"), ("StatefulSet", "herald-ps"),
                           ("StatefulSet", "herald-worker")):
        obj = find(gang, kind, obj_name)
        members += obj["spec"].get("replicas", 1)
        labels = obj["spec"]["template"]["metadata"]["labels"]
        if labels.get("scheduling.x-k8s.io/pod-group") != "herald" or \
                pod_spec(obj).get("schedulerName") != "scheduler-plugins-scheduler":
            fail("overlays/gang", f"{kind}/{obj_name} is not in the pod group")
    if group["spec"]["minMember"] != members:
        fail("overlays/gang", f"minMember {group['spec']['minMember']}, pods {members}")
    for w in (o for o in rendered["overlays/tls"] if o["kind"] in WORKLOADS):
        c = pod_spec(w)["containers"][0]
        binary = main_binary(c)
        wanted = ["tls_ca", "tls_server_name"]
        if binary != "heraldctl":
            wanted += ["tls_cert", "tls_key"]
            if any("grpc" in c[k] for k in ("livenessProbe", "readinessProbe")):
                fail("overlays/tls", f"{binary} keeps a grpc probe, which speaks no TLS")
        for flag in wanted:
            if flag_value(c, binary, flag) is None:
                fail("overlays/tls", f"{binary} lacks --{flag}")

    # The check catches a renamed flag (and a Service on the wrong port).
    global failures
    real, failures = failures, []
    broken = render(os.path.join(K8S, "base"))
    ps = pod_spec(find(broken, "StatefulSet", "herald-ps"))["containers"][0]
    ps["args"] = [a.replace("--data_dir=", "--data_directory=") for a in ps["args"]]
    find(broken, "Service", "herald-scheduler")["spec"]["ports"][0]["port"] = 7100
    check("base (broken on purpose)", broken)
    caught = failures
    failures = real
    if not any("--data_directory" in f for f in caught):
        fail("self-check", "a renamed flag went unnoticed")
    if not any("does not reach" in f or "no Service" in f for f in caught):
        fail("self-check", "a Service on the wrong port went unnoticed")

    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("k8s_manifests_test: PASSED")


if __name__ == "__main__":
    main()
