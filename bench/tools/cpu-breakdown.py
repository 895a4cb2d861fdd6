#!/usr/bin/env python3
# Per-thread CPU breakdown of an end-to-end bench peak run (issue 6), per event.
#   bench/tools/cpu-breakdown.py [WINDOW_S] [DELAY_S] &   # then: veridoc-dev bench --output /tmp/bench-e2e --skip-scaling --duration 5 --backlog 0
# Waits for the bench worker (veridoc run --config /tmp/veridoc-bench-…) to get busy, waits DELAY_S, then diffs
# /proc/*/task/*/stat over WINDOW_S: worker threads (vd-verify-N, vd-persist, …), the bench process
# (mock broker rdk:mock, load producer, outcome reader), the bench PostgreSQL (backends by state), everything
# else; events in the window are counted in the bench databases. PERF=FILE also runs perf record -a -g over the window.
# Waits for the first `veridoc run` process to get busy, then measures per-thread CPU
# of every process on the machine over a window; prints a breakdown grouped by process/thread name.
import os, sys, time, collections
HZ = os.sysconf('SC_CLK_TCK')
window = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
delay = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
def cmd(pid):
    try: return open(f'/proc/{pid}/cmdline','rb').read().replace(b'\0',b' ').decode(errors='replace')
    except: return ''
def tstat(pid, tid):
    try:
        s = open(f'/proc/{pid}/task/{tid}/stat').read()
        comm = s[s.index('(')+1:s.rindex(')')]
        f = s[s.rindex(')')+2:].split()
        return comm, int(f[11]) + int(f[12])
    except: return None
def snap():
    out = {}
    for pid in os.listdir('/proc'):
        if not pid.isdigit(): continue
        try: tids = os.listdir(f'/proc/{pid}/task')
        except: continue
        c = cmd(pid)
        for tid in tids:
            r = tstat(pid, tid)
            if r: out[(int(pid), int(tid))] = (r[0], r[1], c)
    return out
def total():
    f = open('/proc/stat').readline().split()[1:]
    v = list(map(int, f)); return sum(v), v[3] + v[4]
def worker_pid():
    for pid in os.listdir('/proc'):
        if pid.isdigit() and ' run --config /tmp/veridoc-bench-' in cmd(pid): return int(pid)
t0 = time.time()
while True:
    w = worker_pid()
    if w: break
    if time.time() - t0 > 600: sys.exit('no worker')
    time.sleep(0.1)
def wcpu():
    try:
        f = open(f'/proc/{w}/stat').read(); f = f[f.rindex(')')+2:].split(); return int(f[11]) + int(f[12])
    except: return 0
last = wcpu()
while True:
    time.sleep(0.25); c = wcpu()
    if (c - last) / HZ / 0.25 > 0.5: break
    last = c
time.sleep(delay)
import subprocess
def events():
    port = None
    for pid in os.listdir('/proc'):
        if pid.isdigit():
            c = cmd(pid)
            if c.startswith('/usr/lib/postgresql') and ' -p ' in c and 'veridoc-bench' in c: port = c.split(' -p ')[1].split()[0]
    if not port: return 0
    q = lambda db, sql: subprocess.run(['psql','-h','127.0.0.1','-p',port,'-U','postgres','-d',db,'-Atc',sql],capture_output=True,text=True).stdout.strip()
    n = 0
    for db in q('postgres', "select datname from pg_database where datname like 'bench_%'").split():
        try: n += int(q(db, 'select count(*) from results') or 0)
        except: pass
    return n
import glob, urllib.request, json as _json
def metrics():
    c = cmd(w).split()
    folder = None
    for i, a in enumerate(c):
        if a == '--config' and i + 1 < len(c): folder = c[i+1]
    logs = []
    while folder and folder != '/':
        folder = os.path.dirname(folder)
        if os.path.exists(folder + '/worker-0.log'): logs = [folder + '/worker-0.log']; break
    if not logs: return {}
    port = None
    for line in open(logs[-1]):
        if 'observability listening' in line:
            import re; m = re.search(r'port[^0-9]*(\d+)', line); port = m.group(1) if m else None
    if not port: return {}
    out = {}
    try:
        for line in urllib.request.urlopen(f'http://127.0.0.1:{port}/metrics', timeout=2).read().decode().splitlines():
            if line.startswith('#'): continue
            parts = line.rsplit(' ', 1)
            if len(parts) == 2:
                try: out[parts[0]] = float(parts[1])
                except: pass
    except Exception as e: print('metrics failed', e)
    return out
ma = metrics()
ea = events()
perf = None
if os.environ.get('PERF'):
    perf = subprocess.Popen(['perf','record','-F','999','-a','-g','-o',os.environ['PERF'],'--','sleep',str(window)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
a = snap(); ta, ia = total(); t1 = time.time()
time.sleep(window)
b = snap(); tb, ib = total(); el = time.time() - t1
eb = events()
if perf: perf.wait()
mb = metrics()
for k in sorted(mb):
    if ('batch' in k and ('_sum' in k or '_count' in k)) or 'published' in k:
        print(f"  metric {k}: {mb[k]-ma.get(k,0):.3f}")
print(f"events in window {eb-ea} -> {(eb-ea)/el:.0f}/s")
ncpu = os.cpu_count()
print(f"window {el:.2f}s, machine busy {(1 - (ib-ia)/(tb-ta))*ncpu:.2f} of {ncpu} cores")
groups = collections.Counter()
for k, (comm, t, c) in b.items():
    if k in a: d = t - a[k][1]
    else: d = t
    if d <= 0: continue
    pid = k[0]
    import re
    if ' run --config /tmp/veridoc-bench-' in c: proc = 'worker'
    elif ' bench --output /tmp/bench-e2e' in c: proc = 'bench'
    elif c.startswith('postgres') or '/postgresql/' in c: proc = 'postgres' if ' bench_' in c else 'postgres-aux'
    else: proc = 'other'
    if proc.startswith('postgres'):
        tname = c.split(':')[1].strip().split(' ')[0] if ':' in c else 'postmaster'
        if tname == 'postgres': tname = 'backend ' + (c.split()[-1] if c.split() else '')
    elif proc == 'other': tname = comm
    else: tname = re.sub(r'\d+$', 'N', comm)
    groups[(proc, tname)] += d
tot = collections.Counter()
for (p, t), d in groups.items(): tot[p] += d
for p, d in tot.most_common():
    print(f"{p:20s} {d/HZ/el:6.3f} cores  {1000*d/HZ/max(eb-ea,1):6.3f} ms/event")
    for (pp, t), dd in sorted(groups.items(), key=lambda x: -x[1]):
        if pp == p and dd/HZ/el > 0.005: print(f"    {t:28s} {dd/HZ/el:6.3f}  {1000*dd/HZ/max(eb-ea,1):6.3f} ms/ev")
