"""The Dockerfile's final stage, and whether a built image matches it.

    python3 .ci/dockerfile_final_stage.py show Dockerfile [--build-arg K=V ...]
    python3 .ci/dockerfile_final_stage.py compare Dockerfile INSPECT.json ROOTFS.tar \
        [--build-arg K=V ...]
    python3 .ci/dockerfile_final_stage.py self-test

CI cannot pull the Dockerfile's base (no registry here), so .ci/image-checks.sh assembles the
final stage itself from the host's build. This holds the two to the same contract: what the
final stage's instructions say (USER, ENTRYPOINT, CMD, EXPOSE, LABEL, the COPY destinations with
their owner and mode) and what robotsd relies on its base for (BASES below: the CA bundle, the
passwd and group entries of the USER, the base's ENV and WORKDIR). INSPECT.json is
`podman image inspect` output; ROOTFS.tar is `podman export` of a container of that image.
Exit status 1 and one line per difference when they differ.

Only the instructions a runtime image's final stage uses are understood; any other instruction
there (RUN, ADD, ...) is an error rather than ignored, so that a Dockerfile change this check
cannot follow fails loudly instead of passing unchecked.
"""

import json
import re
import shlex
import sys
import tarfile

# What robotsd needs from the base image of the final stage, beyond the Dockerfile's own
# instructions. A new base fails the check until it is described here (and the CI image follows).
BASES = {
    "gcr.io/distroless/cc-debian12:nonroot": {
        # rustls-native-certs (through reqwest's platform verifier) reads this bundle; distroless
        # also names it in SSL_CERT_FILE.
        "ca_bundle": "/etc/ssl/certs/ca-certificates.crt",
        "env": {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
        },
        "workdir": "/home/nonroot",
        # name of the passwd and group entries for the numeric USER
        "users": {65532: "nonroot"},
    },
}

# The CI image is FROM scratch: saying the distroless base there would be untrue.
CI_LABEL_OVERRIDES = {"org.opencontainers.image.base.name": "scratch"}

KNOWN = {"from", "arg", "label", "copy", "user", "expose", "entrypoint", "cmd", "env", "workdir"}


class DockerfileError(Exception):
    pass


def logical_lines(text):
    """Instructions with their continuation lines joined; comments and the parser directive
    (`# syntax=...`) dropped. Comment lines inside a continued instruction are skipped, as
    Docker does."""
    lines, current = [], ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not current):
            continue
        if stripped.endswith("\\"):
            current += stripped[:-1] + " "
            continue
        current += stripped
        if current.strip():
            lines.append(current.strip())
        current = ""
    if current.strip():
        lines.append(current.strip())
    return lines


def substitute(value, args):
    """${NAME}, ${NAME:-default} and $NAME from the ARGs in scope; an unknown one is an error
    (the image would get an empty string, which is never what a label meant)."""

    def one(match):
        name = match.group(1) or match.group(3)
        default = match.group(2)
        if name in args and args[name] is not None:
            return args[name]
        if default is not None:
            return default
        raise DockerfileError(f"${name} is used but no ARG gives it a value")

    return re.sub(r"\$\{(\w+)(?::-([^}]*))?\}|\$(\w+)", one, value)


def exec_form(rest, what):
    """A JSON array (exec form), or shell form, which runs /bin/sh -c: distroless has no shell."""
    try:
        value = json.loads(rest)
    except json.JSONDecodeError:
        raise DockerfileError(f"{what} {rest!r}: shell form needs /bin/sh, which the image lacks")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DockerfileError(f"{what} {rest!r} is not a JSON array of strings")
    return value


def key_values(rest, what):
    """LABEL/ENV `k=v k2="v 2"` (and the legacy `ENV k v`)."""
    words = shlex.split(rest)
    if what == "ENV" and words and "=" not in words[0]:
        return {words[0]: rest.split(None, 1)[1] if len(words) > 1 else ""}
    pairs = {}
    for word in words:
        if "=" not in word:
            raise DockerfileError(f"{what} {rest!r}: {word!r} is not key=value")
        key, value = word.split("=", 1)
        pairs[key] = value
    return pairs


def final_stage(text, build_args=None):
    """The final stage as a dict: base, user, entrypoint, cmd, exposed, labels, env, workdir,
    copies (each {dest, chown, chmod})."""
    build_args = dict(build_args or {})
    lines = logical_lines(text)
    froms = [i for i, line in enumerate(lines) if line.split()[0].lower() == "from"]
    if not froms:
        raise DockerfileError("no FROM")
    # ARGs before the first FROM may name the base image; the build stages are not read.
    global_args = {}
    for line in lines[: froms[0]]:
        word, _, rest = line.partition(" ")
        if word.lower() != "arg":
            raise DockerfileError(f"{word} before the first FROM")
        name, eq, default = rest.strip().partition("=")
        global_args[name] = build_args.get(name, default if eq else None)
    parts = lines[froms[-1]].split()[1:]
    if len(parts) not in (1, 3) or (len(parts) == 3 and parts[1].lower() != "as"):
        raise DockerfileError(f"{lines[froms[-1]]!r}: expected `FROM image [AS name]`")
    if any(p.startswith("--") for p in parts):
        raise DockerfileError(f"{lines[froms[-1]]!r}: FROM flags are not understood")
    stage = {"base": substitute(parts[0], global_args), "args": {}, "user": None,
             "entrypoint": None, "cmd": None, "exposed": [], "labels": {}, "env": {},
             "workdir": None, "copies": []}
    unknown = []
    for line in lines[froms[-1] + 1 :]:
        word, _, rest = line.partition(" ")
        instruction, rest = word.lower(), rest.strip()
        if instruction == "arg":
            name, eq, default = rest.partition("=")
            stage["args"][name] = build_args.get(name, default if eq else None)
            continue
        if instruction not in KNOWN:
            unknown.append(word.upper())
            continue
        scope = {**stage["args"], **stage["env"]}
        if instruction == "user":
            stage["user"] = substitute(rest, scope)
        elif instruction in ("entrypoint", "cmd"):
            stage[instruction] = exec_form(rest, word.upper())
        elif instruction == "expose":
            for port in substitute(rest, scope).split():
                stage["exposed"].append(port if "/" in port else port + "/tcp")
        elif instruction == "label":
            pairs = key_values(rest, "LABEL")
            stage["labels"].update({k: substitute(v, scope) for k, v in pairs.items()})
        elif instruction == "env":
            pairs = key_values(rest, "ENV")
            stage["env"].update({k: substitute(v, scope) for k, v in pairs.items()})
        elif instruction == "workdir":
            stage["workdir"] = substitute(rest, scope)
        elif instruction == "copy":
            words = shlex.split(rest)
            flags = dict(w[2:].split("=", 1) for w in words if w.startswith("--") and "=" in w)
            paths = [w for w in words if not w.startswith("--")]
            if len(paths) < 2:
                raise DockerfileError(f"COPY {rest!r}: expected sources and a destination")
            stage["copies"].append({"dest": substitute(paths[-1], scope),
                                    "chown": flags.get("chown"), "chmod": flags.get("chmod")})
    if unknown:
        raise DockerfileError("the final stage uses " + ", ".join(unknown)
                              + ", which this check does not understand: teach it")
    stage["exposed"].sort()
    del stage["args"]
    return stage


def passwd_entries(text):
    """{uid: (name, gid)} from /etc/passwd, or {gid: name} from /etc/group."""
    entries = {}
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) >= 4 and fields[2].isdigit():
            entries[int(fields[2])] = (fields[0], fields[3]) if len(fields) >= 7 else fields[0]
    return entries


def differences(stage, inspect, rootfs):
    """Every way the built image (inspect: podman image inspect's object; rootfs: an open
    tarfile of its filesystem) differs from the final stage. Empty when they agree."""
    found = []
    base = BASES.get(stage["base"])
    if base is None:
        return [f"the final stage's base is {stage['base']}, not one of {sorted(BASES)}: describe "
                "what robotsd needs from it in BASES (.ci/dockerfile_final_stage.py) and make "
                ".ci/image-checks.sh build that"]
    config = inspect.get("Config") or {}

    def same(what, dockerfile, image):
        if dockerfile != image:
            found.append(f"{what}: the final stage gives {dockerfile!r}, the image has {image!r}")

    same("USER", stage["user"], config.get("User") or None)
    same("ENTRYPOINT", stage["entrypoint"], config.get("Entrypoint") or None)
    same("CMD", stage["cmd"], config.get("Cmd") or None)
    same("EXPOSE", stage["exposed"], sorted(config.get("ExposedPorts") or {}))
    labels, image_labels = {**stage["labels"], **CI_LABEL_OVERRIDES}, config.get("Labels") or {}
    for key in sorted(set(labels) | set(image_labels)):
        same(f"LABEL {key}", labels.get(key), image_labels.get(key))
    env = dict(e.split("=", 1) for e in config.get("Env") or [])
    same("ENV (the base's and the stage's)", {**base["env"], **stage["env"]}, env)
    same("WORKDIR", stage["workdir"] or base["workdir"], config.get("WorkingDir") or None)

    members = {"/" + m.name.removeprefix("./").lstrip("/"): m for m in rootfs.getmembers()}

    def regular_file(path, what):
        member = members.get(path)
        if member is None or not member.isfile():
            found.append(f"{what}: {path} is not a regular file in the image")
            return None
        return member

    def read(member):
        return rootfs.extractfile(member).read().decode("utf-8", "replace")

    for copy in stage["copies"]:
        member = regular_file(copy["dest"], "COPY")
        if member is None:
            continue
        if copy["chown"]:
            same(f"COPY {copy['dest']} owner", copy["chown"], f"{member.uid}:{member.gid}")
        if copy["chmod"]:
            same(f"COPY {copy['dest']} mode", f"{int(copy['chmod'], 8):04o}",
                 f"{member.mode & 0o7777:04o}")
    if stage["entrypoint"]:
        member = regular_file(stage["entrypoint"][0], "ENTRYPOINT")
        if member is not None and not member.mode & 0o111:
            found.append(f"ENTRYPOINT: {stage['entrypoint'][0]} is not executable")

    bundle = regular_file(base["ca_bundle"], "CA bundle")
    if bundle is not None and "-----BEGIN CERTIFICATE-----" not in read(bundle):
        found.append(f"CA bundle: {base['ca_bundle']} holds no PEM certificate")

    user = (stage["user"] or "").split(":")
    if not all(part.isdigit() for part in user):
        found.append(f"USER {stage['user']!r} is not numeric: runAsNonRoot cannot verify a name")
        return found
    uid, gid = int(user[0]), int(user[1] if len(user) > 1 else user[0])
    passwd, group = regular_file("/etc/passwd", "passwd"), regular_file("/etc/group", "group")
    for what, number in [("user", uid), ("group", gid)]:
        if number not in base["users"]:
            found.append(f"USER {stage['user']}: the base {stage['base']} has no {what} {number} "
                         "(BASES in .ci/dockerfile_final_stage.py)")
    if passwd is not None and uid in base["users"]:
        same(f"/etc/passwd entry (name, gid) for uid {uid}", (base["users"][uid], str(gid)),
             passwd_entries(read(passwd)).get(uid))
    if group is not None and gid in base["users"]:
        same(f"/etc/group entry for gid {gid}", base["users"][gid],
             passwd_entries(read(group)).get(gid))
    return found


def parse_build_args(argv):
    args, rest = {}, []
    while argv:
        word = argv.pop(0)
        if word == "--build-arg" and argv:
            key, _, value = argv.pop(0).partition("=")
            args[key] = value
        else:
            rest.append(word)
    return args, rest


def self_test():
    """The check must notice a change on either side: each alteration below must be reported."""
    import io

    dockerfile = (
        "# syntax=docker/dockerfile:1\nFROM rust:1 AS builder\nRUN make \\\n  all\n"
        "FROM gcr.io/distroless/cc-debian12:nonroot\nARG VERSION=1.0\n"
        'LABEL a="x y" \\\n      v="${VERSION}"\n'
        "COPY --from=builder --chown=0:0 --chmod=0755 /robotsd /robotsd\n"
        'USER 65532:65532\nEXPOSE 8080\nENTRYPOINT ["/robotsd"]\n'
    )
    base = BASES["gcr.io/distroless/cc-debian12:nonroot"]

    def image(**change):
        config = {"User": "65532:65532", "Entrypoint": ["/robotsd"], "Cmd": None,
                  "ExposedPorts": {"8080/tcp": {}}, "WorkingDir": base["workdir"],
                  "Labels": {"a": "x y", "v": "2.0", **CI_LABEL_OVERRIDES},
                  "Env": [f"{k}={v}" for k, v in base["env"].items()]}
        config.update(change)
        return {"Config": config}

    def rootfs(passwd="nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
               binary_mode=0o755):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for name, body, mode in [("robotsd", b"\x7fELF", binary_mode),
                                     ("etc/passwd", passwd.encode(), 0o644),
                                     ("etc/group", b"nonroot:x:65532:\n", 0o644),
                                     ("etc/ssl/certs/ca-certificates.crt",
                                      b"-----BEGIN CERTIFICATE-----\n", 0o644)]:
                info = tarfile.TarInfo(name)
                info.size, info.mode = len(body), mode
                tar.addfile(info, io.BytesIO(body))
        buffer.seek(0)
        return tarfile.open(fileobj=buffer)

    stage = final_stage(dockerfile, {"VERSION": "2.0"})
    assert differences(stage, image(), rootfs()) == [], differences(stage, image(), rootfs())
    altered_images = [
        ({"User": "0:0"}, rootfs()),
        ({"Entrypoint": ["/bin/robotsd"]}, rootfs()),
        ({"ExposedPorts": {"8080/tcp": {}, "9090/tcp": {}}}, rootfs()),
        ({"Labels": {"a": "x y", "v": "1.0", **CI_LABEL_OVERRIDES}}, rootfs()),
        ({"Env": []}, rootfs()),
        ({}, rootfs(passwd="nonroot:x:1000:1000:nonroot:/home/nonroot:/sbin/nologin\n")),
        ({}, rootfs(binary_mode=0o775)),
    ]
    for change, fs in altered_images:
        assert differences(stage, image(**change), fs), f"image change {change} went unnoticed"
    altered_dockerfiles = [
        dockerfile.replace("USER 65532:65532", "USER 65533:65533"),
        dockerfile.replace('["/robotsd"]', '["/robotsd", "serve"]'),
        dockerfile.replace("EXPOSE 8080", "EXPOSE 8080 9090"),
        dockerfile.replace("/robotsd /robotsd", "/robotsd /usr/bin/robotsd"),
        dockerfile.replace("--chmod=0755", "--chmod=0555"),
        dockerfile + 'CMD ["serve"]\n',
        dockerfile.replace("cc-debian12:nonroot", "cc-debian13:nonroot"),
    ]
    for altered in altered_dockerfiles:
        assert differences(final_stage(altered, {"VERSION": "2.0"}), image(), rootfs()), altered
    for broken in [dockerfile + "RUN true\n", dockerfile + "ENTRYPOINT /robotsd\n",
                   dockerfile.replace("${VERSION}", "${NOPE}")]:
        try:
            final_stage(broken)
        except DockerfileError:
            continue
        raise AssertionError(f"accepted: {broken!r}")
    print("dockerfile_final_stage.py self-test: ok")


def main(argv):
    build_args, argv = parse_build_args(argv)
    if argv == ["self-test"]:
        self_test()
        return 0
    if len(argv) == 2 and argv[0] == "show":
        with open(argv[1]) as f:
            print(json.dumps(final_stage(f.read(), build_args), indent=2))
        return 0
    if len(argv) == 4 and argv[0] == "compare":
        with open(argv[1]) as f:
            stage = final_stage(f.read(), build_args)
        with open(argv[2]) as f:
            inspect = json.load(f)
        inspect = inspect[0] if isinstance(inspect, list) else inspect
        with tarfile.open(argv[3]) as rootfs:
            found = differences(stage, inspect, rootfs)
        for line in found:
            print(f"image differs from {argv[1]}'s final stage: {line}", file=sys.stderr)
        if not found:
            print(f"the image matches {argv[1]}'s final stage: USER {stage['user']}, "
                  f"ENTRYPOINT {stage['entrypoint']}, EXPOSE {' '.join(stage['exposed'])}, "
                  f"{len(stage['labels'])} labels, {[c['dest'] for c in stage['copies']]}, "
                  f"the base's CA bundle, passwd and group entries, ENV and WORKDIR")
        return 1 if found else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except DockerfileError as error:
        print(f"Dockerfile: {error}", file=sys.stderr)
        sys.exit(1)
