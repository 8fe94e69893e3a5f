#!/usr/bin/env python3
"""Checks META.json against the PGXN meta specification, version 1.0.0
(https://pgxn.org/meta/spec.txt), and against the source tree: the
distribution's version is the extension's default_version, and the files
it names exist.  Prints TAP lines ("ok N - ..."); exits 1 if one fails.

Usage: python3 test/meta_check.py [REPO]
"""
import json
import os
import re
import sys

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+)?$")
LICENSES = {
    "agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd",
    "freebsd", "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1",
    "lgpl_3_0", "mit", "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5",
    "postgresql", "qpl_1_0", "ssleay", "sun", "zlib", "open_source",
    "restricted", "unrestricted", "unknown",
}
PHASES = {"configure", "build", "runtime", "test", "develop"}
RELATIONS = {"requires", "recommends", "suggests", "conflicts"}
STATUSES = {"stable", "testing", "unstable"}
KNOWN = {
    "abstract", "description", "generated_by", "license", "maintainer",
    "meta-spec", "name", "no_index", "prereqs", "provides", "release_status",
    "resources", "tags", "version",
}

results = []


def check(ok, what):
    results.append((bool(ok), what))


def is_text(value):
    return isinstance(value, str) and value.strip() != ""


def version_or_zero(value):
    return value == 0 or value == "0" or (isinstance(value, str) and SEMVER.match(value))


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else "."
    with open(os.path.join(repo, "META.json"), encoding="utf-8") as f:
        meta = json.load(f)

    # the fields the specification requires, and their forms
    for field in ("name", "abstract", "maintainer", "license", "provides", "version", "meta-spec"):
        check(field in meta, f"required field {field} present")
    check(is_text(meta.get("name")) and len(meta["name"]) >= 2
          and not re.search(r"[/\\\x00-\x1f]", meta["name"]), "name is a valid distribution name")
    check(is_text(meta.get("abstract")), "abstract is text")
    maintainer = meta.get("maintainer")
    check(is_text(maintainer) or (isinstance(maintainer, list) and maintainer
                                  and all(is_text(m) for m in maintainer)), "maintainer is text or a list of text")
    check(meta.get("license") in LICENSES, f"license {meta.get('license')!r} is one the specification names")
    check(SEMVER.match(str(meta.get("version", ""))), f"version {meta.get('version')!r} is a semantic version")
    spec = meta.get("meta-spec", {})
    check(spec.get("version") == "1.0.0", "meta-spec version is 1.0.0")
    unknown = [k for k in meta if k not in KNOWN and not k.startswith("x_") and not k.startswith("X_")]
    check(not unknown, f"no unknown top-level field {unknown}")

    provides = meta.get("provides", {})
    check(isinstance(provides, dict) and provides, "provides names at least one extension")
    for name, entry in provides.items():
        check(is_text(entry.get("file")) and SEMVER.match(str(entry.get("version", ""))),
              f"provides {name}: a file and a semantic version")
        check(os.path.isfile(os.path.join(repo, entry.get("file", ""))),
              f"provides {name}: its file {entry.get('file')} exists")
        if "docfile" in entry:
            check(os.path.isfile(os.path.join(repo, entry["docfile"])),
                  f"provides {name}: its docfile {entry['docfile']} exists")

    prereqs = meta.get("prereqs", {})
    check(all(p in PHASES for p in prereqs), "prereqs phases are the specification's")
    check(all(r in RELATIONS and all(version_or_zero(v) for v in deps.values())
              for phase in prereqs.values() for r, deps in phase.items()),
          "prereqs relations and versions are the specification's")
    if "release_status" in meta:
        check(meta["release_status"] in STATUSES, "release_status is stable, testing or unstable")
    if "tags" in meta:
        check(all(is_text(t) and len(t) <= 255 for t in meta["tags"]), "tags are short text")

    # consistent with the extension itself
    with open(os.path.join(repo, "queue.control"), encoding="utf-8") as f:
        default = re.search(r"default_version\s*=\s*'([^']+)'", f.read()).group(1)
    check(meta.get("version") == default + ".0" and provides.get("queue", {}).get("version") == default + ".0",
          f"the distribution's version is the extension's default_version {default}")

    for number, (ok, what) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {number} - META.json: {what}")
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
