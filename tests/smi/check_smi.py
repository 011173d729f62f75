#!/usr/bin/env python3
"""Runs `ember smi` against the fake NVML and checks every output format and error path.

  check_smi.py --fake-nvml LIB --suite cpu|sim -- EMBER

The fake's GPU d has the UUID of the SIMT emulator's board d, so with `ember-sim` (suite sim)
the cuda:N column is checked against CUDA_VISIBLE_DEVICES; suite cpu checks the formats, the
processes with their monitor status files, --watch under SIGINT/SIGTERM and the error paths.
"""
import argparse
import json
import os
import pty
import signal
import subprocess
import sys
import tempfile
import time

CSV_COLUMNS = ("time,index,cuda_device,uuid,name,pci_bus_id,utilization_gpu,utilization_memory,"
               "memory_used_mib,memory_total_mib,temperature_c,power_w,power_limit_w,clock_sm_mhz,"
               "clock_memory_mhz,pcie_generation,pcie_width,nvlink_active,ecc_corrected,"
               "ecc_uncorrected,throttle_reasons,processes,ember_allocated_mib,"
               "ember_reserved_mib").split(",")
GPU_KEYS = {"index": int, "cuda_device": (int, type(None)), "uuid": str, "name": str,
            "pci_bus_id": str, "error": (str, type(None)), "utilization": dict, "memory": dict,
            "temperature_c": (int, type(None)), "power": dict, "clocks": dict, "pcie": dict,
            "nvlink_active": (int, type(None)), "throttle_reasons": (list, type(None)),
            "ecc": dict, "processes": list}
FAILURES = []


def uuid(d):
    return "GPU-%02x000000-0000-0000-0000-000000000000" % d


class Smi:
    def __init__(self, exe, fake, runtime_dir):
        self.exe, self.fake, self.runtime_dir = exe, fake, runtime_dir

    def env(self, extra):
        env = dict(os.environ)
        for k in ("CUDA_VISIBLE_DEVICES", "EMBER_SIM_DEVICES", "FAKE_NVML_GPUS", "FAKE_NVML_INIT",
                  "FAKE_NVML_LOST", "FAKE_NVML_PROCESSES"):
            env.pop(k, None)
        env["EMBER_NVML_LIBRARY"] = self.fake
        env["EMBER_RUNTIME_DIR"] = self.runtime_dir
        env.update(extra)
        return env

    def run(self, args, env=None, stdout=subprocess.PIPE):
        p = subprocess.run([self.exe, "smi"] + args, env=self.env(env or {}), stdout=stdout,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        return p.returncode, p.stdout or "", p.stderr

    def popen(self, args, env=None):
        return subprocess.Popen([self.exe, "smi"] + args, env=self.env(env or {}),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def check(cond, what, out=""):
    if not cond:
        FAILURES.append(what)
        print("check_smi: FAIL: " + what + (("\n---- output ----\n" + out) if out else ""))


def json_of(out, what):
    try:
        return json.loads(out)
    except json.JSONDecodeError as e:
        check(False, "%s: stdout is not JSON (%s)" % (what, e), out)
        return {"gpus": []}


def check_schema(d, out):
    check(isinstance(d.get("time"), str) and isinstance(d.get("driver_release"), str),
          "json: time and driver_release", out)
    for g in d["gpus"]:
        for key, kind in GPU_KEYS.items():
            check(isinstance(g.get(key), kind), "json: gpus[].%s missing or of the wrong type" % key)
        for p in g["processes"]:
            for key in ("pid", "name", "running", "used_memory", "ember"):
                check(key in p, "json: processes[].%s missing" % key)


# ---- suite cpu ------------------------------------------------------------------------------

def suite_cpu(smi):
    rc, out, err = smi.run(["--json"])
    check(rc == 0, "json: exit %d, stderr %s" % (rc, err), out)
    d = json_of(out, "json")
    check_schema(d, out)
    check(d["driver_release"] == "999.01.02", "json: driver release", out)
    check([g["index"] for g in d["gpus"]] == [0, 1], "json: two GPUs by index", out)
    g0, g1 = d["gpus"][0], d["gpus"][1]
    check(g0["uuid"] == uuid(0) and g0["name"] == "NVIDIA Fake GPU 0", "json: uuid and name", out)
    check(g0["pci_bus_id"] == "00000000:01:00.0", "json: PCI bus id", out)
    check(g0["utilization"] == {"gpu": 40, "memory": 20}, "json: utilisation", out)
    check(g1["memory"] == {"used": 2 << 30, "total": 80 << 30}, "json: memory", out)
    check(g0["temperature_c"] == 50 and g0["power"] == {"draw_w": 200.5, "limit_w": 700.0},
          "json: temperature and power", out)
    check(g0["clocks"] == {"sm_mhz": 1755, "memory_mhz": 2619, "sm_max_mhz": 1980,
                           "memory_max_mhz": 2619}, "json: clocks", out)
    check(g0["pcie"] == {"generation": 5, "generation_max": 5, "width": 16, "width_max": 16},
          "json: PCIe", out)
    check(g0["nvlink_active"] == 3 and g1["nvlink_active"] is None, "json: NVLink", out)
    check(g0["throttle_reasons"] == ["gpu_idle"] and g1["throttle_reasons"] == ["sw_power_cap"],
          "json: throttle reasons", out)
    check(g0["ecc"] == {"enabled": True, "corrected": 3, "uncorrected": 0} and
          g1["ecc"] == {"enabled": False, "corrected": None, "uncorrected": None}, "json: ECC", out)

    rc, out, err = smi.run([])
    check(rc == 0, "text: exit %d" % rc, out + err)
    for label in ("GPU 0", "GPU 1", "utilisation  SM 40%, memory 20%", "memory       1.00 GiB / 80.00 GiB",
                  "temperature  50 C", "power        200.5 / 700.0 W",
                  "clocks       SM 1755 / 1980 MHz", "PCIe Gen5 x16", "NVLink 3 up",
                  "throttle     sw_power_cap", "ECC          on, 3 corrected, 0 uncorrected",
                  "driver 999.01.02"):
        check(label in out, "text: '%s' missing" % label, out)

    rc, out, err = smi.run(["--csv"])
    lines = out.splitlines()
    check(rc == 0 and len(lines) == 3, "csv: a header and two rows", out + err)
    check(lines and lines[0].split(",") == CSV_COLUMNS, "csv: header columns", out)
    for row in lines[1:]:
        check(len(row.split(",")) == len(CSV_COLUMNS), "csv: a row has the header's columns", out)
    if len(lines) == 3:
        r1 = dict(zip(CSV_COLUMNS, lines[2].split(",")))
        check(r1["index"] == "1" and r1["memory_used_mib"] == "2048" and
              r1["throttle_reasons"] == "sw_power_cap" and r1["ecc_corrected"] == "",
              "csv: row values", out)

    rc, out, _ = smi.run(["--json", "--device", "1"])
    check(rc == 0 and [g["index"] for g in json_of(out, "device")["gpus"]] == [1],
          "--device 1 shows GPU 1 only", out)
    rc, out, _ = smi.run(["--json", "--device", "GPU-01"])
    check(rc == 0 and [g["index"] for g in json_of(out, "uuid")["gpus"]] == [1],
          "--device GPU-01 (a UUID prefix) shows GPU 1 only", out)

    processes(smi)
    watch(smi)
    errors(smi)


def processes(smi):
    alive = subprocess.Popen(["sleep", "60"])
    dead = subprocess.Popen(["true"])
    dead.wait()
    try:
        with open("/proc/%d/stat" % alive.pid) as f:
            start = f.read().rsplit(")", 1)[1].split()[19]
        status = ("pid=%d\nstart_time=%s\ncommand=train\ndevice=0\nuuid=%s\nallocated=%d\n"
                  "reserved=%d\npeak_allocated=%d\npeak_reserved=%d\nupdated=1.0\n")
        with open(os.path.join(smi.runtime_dir, "%d.status" % alive.pid), "w") as f:
            f.write(status % (alive.pid, start, uuid(0), 64 << 20, 256 << 20, 100 << 20, 256 << 20))
        # Stale: the process is gone (a dead pid), or the pid now belongs to another process.
        with open(os.path.join(smi.runtime_dir, "%d.status" % dead.pid), "w") as f:
            f.write(status % (dead.pid, "12345", uuid(0), 1, 2, 1, 2))
        procs = "0:%d:512,0:%d:256,1:%d:128" % (alive.pid, dead.pid, alive.pid)
        env = {"FAKE_NVML_PROCESSES": procs}
        rc, out, err = smi.run(["--json"], env)
        d = json_of(out, "processes")
        check(rc == 0, "processes: exit %d %s" % (rc, err), out)
        p0 = d["gpus"][0]["processes"] if d["gpus"] else []
        check(len(p0) == 2, "processes: two on GPU 0", out)
        if len(p0) == 2:
            a, b = p0
            check(a["pid"] == alive.pid and a["name"] == "sleep" and a["running"] and
                  a["used_memory"] == 512 << 20, "processes: the live one", out)
            check(a["ember"] is not None and a["ember"]["allocated"] == 64 << 20 and
                  a["ember"]["reserved"] == 256 << 20 and a["ember"]["command"] == "train",
                  "processes: the allocator's view from the status file", out)
            check(b["pid"] == dead.pid and not b["running"] and b["ember"] is None,
                  "processes: one that exited while listed; its stale status file ignored", out)
        p1 = d["gpus"][1]["processes"] if len(d["gpus"]) > 1 else []
        check(len(p1) == 1 and p1[0]["ember"] is None,
              "processes: the status names GPU 0 only, so GPU 1's entry has no ember view", out)
        rc, out, _ = smi.run([], env)
        check("64.0 MiB / 256.0 MiB (25% in use)" in out, "text: ember allocated / reserved", out)
        check("(exited)" in out, "text: a vanished process is marked", out)
        rc, out, _ = smi.run(["--csv"], env)
        row = dict(zip(CSV_COLUMNS, out.splitlines()[1].split(","))) if rc == 0 else {}
        check(row.get("processes") == "2" and row.get("ember_allocated_mib") == "64" and
              row.get("ember_reserved_mib") == "256", "csv: process count and ember memory", out)
    finally:
        alive.kill()
        alive.wait()


def watch(smi):
    rc, out, _ = smi.run(["--watch", "0.05", "--count", "3"])
    check(rc == 0 and out.count("ember smi ") == 3 and "\033[" not in out,
          "--watch --count 3 off a terminal: three plain readings", out)
    # On a terminal each reading redraws the screen in place.
    master, slave = pty.openpty()
    p = subprocess.Popen([smi.exe, "smi", "--watch", "0.05", "--count", "2"], env=smi.env({}),
                         stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        got += chunk
    p.wait(timeout=30)
    os.close(master)
    text = got.decode(errors="replace")
    check(p.returncode == 0 and text.count("\033[H\033[2J") == 2 and text.count("ember smi ") == 2,
          "--watch on a terminal: redrawn in place twice", text)
    for sig, fmt in ((signal.SIGINT, "--csv"), (signal.SIGTERM, "--json")):
        p = smi.popen(["--watch", "0.1", fmt])
        lines = [p.stdout.readline() for _ in range(3)]
        t0 = time.time()
        p.send_signal(sig)
        try:
            rest, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            check(False, "--watch %s: still running 10 s after %s" % (fmt, sig.name))
            continue
        check(p.returncode == 0, "--watch %s: exit %d after %s (%s)" % (fmt, p.returncode,
                                                                       sig.name, err))
        check(time.time() - t0 < 5, "--watch %s: slow to stop on %s" % (fmt, sig.name))
        got = "".join(lines) + rest
        if fmt == "--json":
            for line in got.splitlines():
                json_of(line, "--watch --json line")
        else:
            rows = got.splitlines()
            check(rows[0].split(",") == CSV_COLUMNS and rows.count(rows[0]) == 1,
                  "--watch --csv: one header", got)
            check(all(len(r.split(",")) == len(CSV_COLUMNS) for r in rows),
                  "--watch --csv: only whole rows", got)


def errors(smi):
    for env, words in (({"EMBER_NVML_LIBRARY": "none"}, "no NVIDIA driver"),
                       ({"EMBER_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"},
                        "no NVIDIA driver"),
                       ({"FAKE_NVML_INIT": "driver_not_loaded"}, "Driver Not Loaded"),
                       ({"FAKE_NVML_INIT": "no_permission"}, "refused access"),
                       ({"FAKE_NVML_GPUS": "0"}, "sees no GPU")):
        rc, out, err = smi.run([], env)
        check(rc == 1 and words in err, "%s: exit 1 and '%s' (got %d: %s)" % (env, words, rc, err))
        check(out == "", "%s: nothing on stdout in text mode" % env, out)
    rc, out, err = smi.run(["--json"], {"FAKE_NVML_INIT": "no_permission"})
    check(rc == 1 and "refused" in json_of(out, "no-permission json").get("error", ""),
          "--json without access: an error object and exit 1", out)
    rc, out, err = smi.run(["--json"], {"FAKE_NVML_LOST": "1"})
    d = json_of(out, "lost")
    check(rc == 0 and d["gpus"][1]["error"] == "GPU is lost" and d["gpus"][0]["error"] is None,
          "a lost GPU is reported, the others shown", out)
    for args, words in ((["--bogus"], "unknown option '--bogus'"),
                        (["--device", "cuda:9"], "--device cuda:9: no such GPU"),
                        (["--device", "7"], "--device 7: no such GPU"),
                        (["--device", "tpu"], "unknown device 'tpu'"),
                        (["--json", "--csv"], "exclude each other"),
                        (["--watch", "0"], "--watch expects"),
                        (["--watch", "soon"], "--watch expects a number"),
                        (["--count", "-1"], "--count expects")):
        rc, out, err = smi.run(args)
        check(rc == 2 and words in err, "%s: exit 2 and '%s' (got %d: %s)" % (args, words, rc, err))
    with open("/dev/full", "w") as full:
        rc, _, err = smi.run([], stdout=full)
    check(rc == 1 and "cannot write" in err, "unwritable output: exit 1 (got %d: %s)" % (rc, err))


# ---- suite sim ------------------------------------------------------------------------------

def cuda_map(smi, env):
    rc, out, err = smi.run(["--json"], env)
    check(rc == 0, "sim %s: exit %d (%s)" % (env, rc, err), out)
    return {g["index"]: g["cuda_device"] for g in json_of(out, "sim")["gpus"]}


def suite_sim(smi):
    three = {"EMBER_SIM_DEVICES": "3", "FAKE_NVML_GPUS": "3"}
    got = cuda_map(smi, three)
    check(got == {0: 0, 1: 1, 2: 2}, "sim: every board visible in order: %s" % got)
    got = cuda_map(smi, dict(three, CUDA_VISIBLE_DEVICES="2,0"))
    check(got == {0: 1, 1: None, 2: 0}, "sim: CUDA_VISIBLE_DEVICES=2,0 maps by UUID: %s" % got)
    got = cuda_map(smi, dict(three, CUDA_VISIBLE_DEVICES="GPU-01"))
    check(got == {0: None, 1: 0, 2: None}, "sim: CUDA_VISIBLE_DEVICES by UUID: %s" % got)
    got = cuda_map(smi, dict(three, CUDA_VISIBLE_DEVICES="1,7,0"))
    check(got == {0: None, 1: 0, 2: None}, "sim: stops at the first invalid entry: %s" % got)
    rc, out, _ = smi.run(["--json", "--device", "cuda:0"], dict(three, CUDA_VISIBLE_DEVICES="2,0"))
    check(rc == 0 and [g["index"] for g in json_of(out, "cuda:0")["gpus"]] == [2],
          "sim: --device cuda:0 is GPU 2 under CUDA_VISIBLE_DEVICES=2,0", out)
    rc, out, err = smi.run(["--device", "cuda:1"], dict(three, CUDA_VISIBLE_DEVICES="2"))
    check(rc == 2 and "CUDA here sees cuda:0" in err, "sim: --device cuda:1 with one visible", err)
    rc, out, _ = smi.run([], dict(three, CUDA_VISIBLE_DEVICES="2,0"))
    check("GPU 2  cuda:0" in out and "GPU 1  (not visible to CUDA)" in out,
          "sim text: the cuda:N column", out)
    train_publishes(smi)


def train_publishes(smi):
    """`ember-sim train` publishes its allocator; smi shows it; Ctrl-C removes the file."""
    with tempfile.TemporaryDirectory() as ck:
        train = subprocess.Popen(
            [smi.exe, "train", "--device", "cuda", "--model", "mlp", "--train-samples", "4096",
             "--test-samples", "64", "--epochs", "20", "--checkpoint-dir", ck],
            env=smi.env({}), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        path = os.path.join(smi.runtime_dir, "%d.status" % train.pid)
        deadline = time.time() + 60
        while not os.path.exists(path) and train.poll() is None and time.time() < deadline:
            time.sleep(0.05)
        check(os.path.exists(path), "train: publishes %s while it runs" % path)
        time.sleep(1.5)  # a reading taken during the steps
        rc, out, err = smi.run(["--json"], {"FAKE_NVML_PROCESSES": "0:%d:100" % train.pid})
        d = json_of(out, "train")
        procs = d["gpus"][0]["processes"] if d["gpus"] else []
        ember = procs[0]["ember"] if procs else None
        check(rc == 0 and ember is not None and ember["command"] == "train" and
              0 < ember["allocated"] <= ember["reserved"],
              "train: smi shows the run's allocated <= reserved", out + err)
        train.send_signal(signal.SIGINT)
        try:
            _, err = train.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            train.kill()
            train.wait()
        check(not os.path.exists(path), "train: the status file is removed at exit (rc %s, %s)"
              % (train.returncode, err[-300:] if err else ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--suite", choices=("cpu", "sim"), required=True)
    ap.add_argument("command", nargs="+")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as runtime_dir:
        smi = Smi(a.command[0], os.path.abspath(a.fake_nvml), runtime_dir)
        (suite_cpu if a.suite == "cpu" else suite_sim)(smi)
    if FAILURES:
        print("check_smi: %d check(s) failed" % len(FAILURES))
        sys.exit(1)
    print("check_smi: suite %s passed" % a.suite)


if __name__ == "__main__":
    main()
