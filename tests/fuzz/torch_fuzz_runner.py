"""The strata side of the PyTorch fuzzer: a long-lived strata-fuzz-torch
process (tests/fuzz/TorchFuzz.cpp) and the parser of what it prints."""
import os
import select
import subprocess
import time

from torch_fuzz_lang import FLOATS, parse_float, parse_list


class Runner:
    """A long-lived strata-fuzz-torch; restarted after a crash, a hang, or
    every `recycle` programs (the DSL keeps compiled programs)."""

    def __init__(self, path, plant=None, threads=1, recycle=400, twice=False):
        self.path, self.plant, self.threads = path, plant, threads
        self.twice = twice
        self.recycle, self.proc, self.count = recycle, None, 0
        self.restarts = 0

    def start(self):
        cmd = [self.path] + ([f"--plant={self.plant}"] if self.plant else [])
        cmd += ["--twice"] if self.twice else []
        env = dict(os.environ, STRATA_NUM_THREADS=str(self.threads))
        for attempt in range(10):  # the binary may be being relinked
            try:
                self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL, env=env)
                break
            except OSError:
                if attempt == 9:
                    raise
                time.sleep(2)
        self.buf, self.count = b"", 0

    def stop(self):
        if self.proc:
            try:
                self.proc.kill()
            except OSError:
                pass
            self.proc.wait()
            self.proc = None

    def run(self, lines, timeout):
        """('ok', output lines) | ('crash', detail) | ('hang', detail)."""
        if self.proc is None or self.count >= self.recycle:
            self.stop()
            self.start()
        self.count += 1
        try:
            self.proc.stdin.write(("\n".join(lines) + "\nend\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died("crash")
        out, deadline, fd = [], time.time() + timeout, self.proc.stdout.fileno()
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                line = line.decode(errors="replace")
                if line == "done":
                    return "ok", out
                out.append(line)
            left = deadline - time.time()
            if left <= 0:
                return self._died("hang", out)
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return self._died("crash", out)
                self.buf += chunk

    def _died(self, kind, out=()):
        self.proc.poll()
        code = self.proc.returncode
        self.stop()
        self.restarts += 1
        detail = f"signal {-code}" if code and code < 0 else f"exit {code}"
        return kind, (detail if kind == "crash" else "timeout") + \
            (f" after {len(out)} output lines" if out else "")


def parse_strata(out):
    res = {"error": None, "errclass": None, "evalall": None, "values": [],
           "grads": {}}
    for line in out:
        tag, _, rest = line.partition(" ")
        if tag in ("E", "X"):
            n, _, msg = rest.partition(" ")
            res["error"] = (int(n), msg)
            res["errclass"] = tag
        elif tag == "A":
            res["evalall"] = rest
        elif tag == "V":
            p = rest.split(" ", 8)
            rec = {"dtype": p[1], "sizes": parse_list(p[2]),
                   "strides": parse_list(p[3]), "offset": int(p[4]),
                   "alias": p[5] if p[5] in ("-", "?") else int(p[5]),
                   "rl": p[6]}
            if p[7] == "ERR":
                rec["error"] = p[8] if len(p) > 8 else ""
            else:
                rec["n"] = int(p[7])
                rec["values"] = parse_values(p[1], p[8] if len(p) > 8 else "")
            res["values"].append(rec)
        elif tag == "M":
            p = rest.split(" ")
            i = int(p[0])
            if i < len(res["values"]):
                res["values"][i]["version"] = int(p[1]) if p[1] != "?" else None
                res["values"][i]["grad_fn"] = p[2]
        elif tag == "G":
            p = rest.split(" ", 4)
            i = int(p[0])
            if p[1] == "none":
                res["grads"][i] = "none"
            elif p[1] == "ERR":
                res["grads"][i] = {"error": rest.split(" ", 2)[2]}
            else:
                res["grads"][i] = {"dtype": p[1], "sizes": parse_list(p[2]),
                                   "n": int(p[3]),
                                   "values": parse_values(p[1], p[4] if len(p) > 4 else "")}
    return res


def parse_values(dt, text):
    if not text:
        return []
    items = text.split(",")
    if dt in FLOATS:
        return [parse_float(x) for x in items]
    return [int(x) for x in items]
