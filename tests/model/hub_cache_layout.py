"""Lays out a Hugging Face hub cache with huggingface_hub's own download code
(run in the venv): hf_hub_download fetches each file of a local model
directory from a stand-in hub on a loopback port, so refs/, snapshots/ and
blobs/ are exactly what `huggingface-cli download` leaves. Then reads the
cache back with huggingface_hub (scan_cache_dir, try_to_load_from_cache) and
prints, as JSON, the config.json path it finds for each revision (by its
name and by its commit) and the commit.

    hub_cache_layout.py CACHE_DIR REPO_ID MODEL_DIR REVISION...

Every revision (a branch or tag name, not a commit) serves the same files
under a commit of its own."""
import hashlib
import http.server
import json
import os
import sys
import threading
import urllib.parse


def commit_of(repo_id, revision):
    return hashlib.sha1(("%s@%s" % (repo_id, revision)).encode()).hexdigest()


class StandInHub(http.server.BaseHTTPRequestHandler):
    """HEAD and GET of /{repo_id}/resolve/{revision}/{filename}, with the
    headers huggingface_hub reads (X-Repo-Commit, ETag, Content-Length)."""

    repo_id = model_dir = None

    def file(self):
        prefix = "/%s/resolve/" % self.repo_id
        path = urllib.parse.urlparse(self.path).path
        if not path.startswith(prefix):
            return None
        revision, _, filename = path[len(prefix):].partition("/")
        full = os.path.join(self.model_dir, urllib.parse.unquote(filename))
        if not os.path.isfile(full):
            return None
        with open(full, "rb") as f:
            return commit_of(self.repo_id, urllib.parse.unquote(revision)), f.read()

    def answer(self, with_body):
        found = self.file()
        if found is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        commit, body = found
        self.send_response(200)
        self.send_header("X-Repo-Commit", commit)
        self.send_header("ETag", '"%s"' % hashlib.sha256(body).hexdigest())
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def do_HEAD(self):
        self.answer(False)

    def do_GET(self):
        self.answer(True)

    def log_message(self, *args):
        pass


def main():
    cache, repo_id, model_dir = sys.argv[1:4]
    revisions = sys.argv[4:]
    StandInHub.repo_id, StandInHub.model_dir = repo_id, model_dir
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StandInHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # huggingface_hub reads its settings when imported.
    os.environ.update(HF_ENDPOINT="http://127.0.0.1:%d" % server.server_address[1],
                      HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_OFFLINE="0", HF_HUB_DISABLE_XET="1")
    import huggingface_hub

    for revision in revisions:
        for name in sorted(os.listdir(model_dir)):
            huggingface_hub.hf_hub_download(repo_id, name, revision=revision, cache_dir=cache)
    server.shutdown()

    info = huggingface_hub.scan_cache_dir(cache)
    repos = [r for r in info.repos if r.repo_id == repo_id]
    assert len(repos) == 1 and not info.warnings, (info.repos, info.warnings)
    refs = sorted(ref for revision in repos[0].revisions for ref in revision.refs)
    assert refs == sorted(revisions), refs
    found = {}
    for revision in revisions:
        commit = commit_of(repo_id, revision)
        path = huggingface_hub.try_to_load_from_cache(repo_id, "config.json", cache_dir=cache,
                                                      revision=revision)
        by_commit = huggingface_hub.try_to_load_from_cache(repo_id, "config.json", cache_dir=cache,
                                                           revision=commit)
        assert isinstance(path, str) and path == by_commit, (revision, path, by_commit)
        found[revision] = {"config": path, "commit": commit}
    json.dump(found, sys.stdout)


if __name__ == "__main__":
    main()
