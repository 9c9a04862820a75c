#!/usr/bin/env python3
"""run.py - the hostile-metadata soak of the vprof runtime (issue 14).

Runs bench/soak/prog_soak under libvprof once per generated metadata file
(gen.py: case i of the seed) and checks that vprof never harms it: exit
status and stdout identical to the run without vprof, no death by a signal,
finished within the time limit, SIGTERM honoured (a subset of the cases
sends it), no process left behind, stderr only the runtime's own known
lines (a rejected file: exactly one, naming the file and an offset), every
layout log complete and readable. Each case draws its tick source
(perf-event ticks at 4,000-20,000 Hz, or POSIX timers), program mode
(work, threads, fork, threads + fork) and now and then another knob
(unwind depth, pipe reads, table granularity, sample capacity, budget).

Counts the outcomes (rejected with a message, accepted without values,
sampled; faults, budget cuts, overdue ticks, dropped samples), writes a
reproducer directory for every failing case (the file, the binary, the
command; for a hang also hang.txt: every process's threads, their kernel
stacks and gdb's backtraces, taken before the kill) and a JSON summary.
Exit status 1 when any case failed. Nothing is left running: a process of
the program still alive after its main process ended (a zombie is dead)
fails the case and is killed.

  run.py --files N [--seed S] [--jobs 2] [--work DIR] [--out FILE]
         [--quick] [--lib libvprof.so] [--term-every K] [--timeout S]
         [--start I] [--only CLASS,CLASS]
"""
import argparse
import collections
import json
import multiprocessing
import os
import random
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gen  # noqa: E402

# The program's variants: metadata that fits one is wrong for the other.
VARIANTS = {'o2pie': ['-O2'], 'o0nopie': ['-O0', '-no-pie', '-fno-pie']}
TERM_LIMIT = 5.0        # seconds from SIGTERM to the end of the process

# The runtime's own stderr lines; anything else is a failure. Each kind may
# appear at most the given number of times (per process where noted).
STDERR_KINDS = [
    ('meta-error', re.compile(r'^vprof: (.*) \(profiling continues without values\)$'), 'once'),
    ('budget', re.compile(r'^vprof: tick budget: \d+ of \d+ ticks cut short \(VPROF_TICK_READS=\d+, '
                          r'VPROF_TICK_US=\d+\), \d+ overdue ticks took no values$'), 'proc'),
    ('full', re.compile(r'^vprof: sample file full: \d+ value samples dropped '
                        r'\(raise VPROF_MAX_SAMPLES\)$'), 'proc'),
    ('arcs', re.compile(r'^vprof: arc table full: \d+ call counts dropped \(raise VPROF_ARCS\)$'), 'proc'),
    ('perf-fallback', re.compile(r'^vprof: perf_event_open: .* \(this thread gets a POSIX '
                                 r'CPU-time timer\)$'), 'thread'),
]


def commands(quick):
    """Program commands: name -> argv tail. --quick: an eighth of the work,
    fewer children (each process costs vprof's start and exit)."""
    r, c = (150, '2') if quick else (1200, '3')
    return {'work': ['work', str(r * 2)], 'threads': ['threads', '3', str(r)],
            'fork': ['fork', c, str(r)], 'mix': ['mix', '2', str(int(c) - 1), str(r // 2)],
            'spin': ['spin', '2', str(int(c) - 1)]}


# ---------------------------------------------------------------- setup (parent)

def sh(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw).stdout


def build(work, vprof_meta):
    """Compiles the variants and writes their base metadata and contexts."""
    out = {}
    for v, flags in VARIANTS.items():
        d = os.path.join(work, 'prog', v)
        os.makedirs(d, exist_ok=True)
        exe = os.path.join(d, 'prog_soak')
        sh('gcc', '-pg', '-g', *flags, '-o', exe, os.path.join(HERE, 'prog_soak.c'), '-lpthread')
        base = os.path.join(d, 'base.vmeta')
        sh(vprof_meta, '--all', '--files', '*prog_soak.c', '--quiet', '-o', base, exe)
        ctx = os.path.join(d, 'ctx.json')
        with open(ctx, 'w') as f:
            json.dump(gen.make_context(exe, base), f)
        out[v] = {'exe': exe, 'ctx': ctx, 'base': base}
    return out


def clean_env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith('VPROF_') and k not in ('LD_PRELOAD', 'GMON_OUT_PREFIX')}


def read_text(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except OSError as e:
        return '<%s>\n' % e.strerror


def group_alive(pgid):
    """The processes of group pgid that are alive. A zombie is left out: it
    is dead, and only waits for its reaper, which on some machines (an
    init that is not a shell) comes a second or more after its parent
    died."""
    pids = []
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        st = read_text('/proc/%s/stat' % d)
        f = st[st.rfind(')') + 2:].split()
        if len(f) > 2 and f[2] == str(pgid) and f[0] not in 'ZX':
            pids.append(int(d))
    return sorted(pids)


def process_report(pid):
    """What a process is doing: its signal state, and each thread's state,
    wait channel, system call and kernel stack."""
    keep = ('Name', 'State', 'PPid', 'Threads', 'SigPnd', 'ShdPnd', 'SigBlk', 'SigCgt')
    out = ['==== process %d\n' % pid]
    out += [l + '\n' for l in read_text('/proc/%d/status' % pid).splitlines()
            if l.split(':')[0] in keep]
    tdir = '/proc/%d/task' % pid
    for tid in sorted(os.listdir(tdir) if os.path.isdir(tdir) else [], key=int):
        t = '%s/%s/' % (tdir, tid)
        st = read_text(t + 'stat')
        f = st[st.rfind(')') + 2:].split()
        out.append('-- thread %s: state %s, utime %s, stime %s, wchan %s\n' % (
            tid, f[0] if f else '?', f[11] if len(f) > 12 else '?',
            f[12] if len(f) > 12 else '?', read_text(t + 'wchan').strip()))
        out.append('   syscall: ' + read_text(t + 'syscall'))
        out.append(read_text(t + 'stack'))
    return ''.join(out)


def gdb_backtraces(pid):
    if not shutil.which('gdb'):
        return 'gdb: not installed\n'
    try:
        r = subprocess.run(['gdb', '-p', str(pid), '-batch', '-nx', '-ex', 'thread apply all bt'],
                           capture_output=True, text=True, timeout=60)
        return r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return 'gdb: no answer in 60 s\n'


def hang_report(pgid):
    """Everything about a hung run's processes that says why, taken before
    they are killed: /proc twice, a second apart (a thread whose CPU times
    grow spins, one whose do not waits), then gdb's backtraces."""
    pids = group_alive(pgid)
    out = ['processes of group %d: %s\n' % (pgid, pids)]
    out += [process_report(p) for p in pids]
    time.sleep(1)
    out.append('\n######## one second later\n')
    out += [process_report(p) for p in pids]
    for p in pids:
        out.append('\n######## gdb, process %d\n' % p)
        out.append(gdb_backtraces(p))
    return ''.join(out)


def end_group(pgid):
    """Kills what is left of group pgid and waits (5 s at most) until it is
    gone: the soak leaves nothing running behind. -> whether anything
    alive was left."""
    left = group_alive(pgid)
    if left:
        time.sleep(0.05)            # a process may be on its way out
        left = group_alive(pgid)
    if not left:
        return False
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    end = time.monotonic() + 5
    while group_alive(pgid) and time.monotonic() < end:
        time.sleep(0.05)
    return True


def run_prog(argv, env, cwd, timeout, term_after=None):
    """Runs argv in its own session. -> dict(status (negative: killed by
    that signal), stdout, stderr, wall, cpu (user + system of the program
    and its children), rss_kb (its largest resident set), hang, term_ms,
    stray, hang_report). term_after: send SIGTERM that many seconds after
    the first line of stdout (the program is up). A hung run is described
    (hang_report) before it is killed."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    pidfd = os.pidfd_open(p.pid)
    out, err = bytearray(), bytearray()
    bufs = {p.stdout.fileno(): out, p.stderr.fileno(): err}
    open_fds = set(bufs)
    res = {'hang': False, 'term_ms': None, 'stray': False}
    status = ru = term_at = term_sent = ended = None
    while status is None or open_fds:
        now = time.monotonic()
        if status is None:
            if not res['hang'] and (now - t0 > timeout or
                                    (term_sent and now - term_sent > TERM_LIMIT)):
                res['hang'] = True
                if term_sent:
                    res['term_ms'] = float('inf')
                res['hang_report'] = hang_report(p.pid)
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if term_after is not None and term_at is None and b'\n' in out:
                term_at = now + term_after
            if term_at is not None and term_sent is None and now >= term_at:
                os.kill(p.pid, signal.SIGTERM)
                term_sent = now
        elif now - ended > 2:           # a descendant still holds the pipes
            break
        wait = [0.5, timeout - (now - t0) + 0.01]
        if term_at is not None and term_sent is None:
            wait.append(term_at - now)
        ready = select.select(list(open_fds) + ([pidfd] if status is None else []), [], [],
                              max(min(wait), 0))[0]
        for fd in ready:
            if fd == pidfd:
                _, st, ru = os.wait4(p.pid, 0)
                status = os.waitstatus_to_exitcode(st)
                ended = time.monotonic()
                if term_sent:
                    res['term_ms'] = (ended - term_sent) * 1000
                continue
            chunk = os.read(fd, 65536)
            if chunk:
                bufs[fd] += chunk
            else:
                open_fds.discard(fd)
    os.close(pidfd)
    p.returncode = status           # reaped here, not by Popen
    p.stdout.close()
    p.stderr.close()
    res['wall'] = time.monotonic() - t0
    # a process of the program still alive after its main process ended
    res['stray'] = end_group(p.pid)
    res['status'] = status
    res['cpu'] = ru.ru_utime + ru.ru_stime
    res['rss_kb'] = ru.ru_maxrss
    res['stdout'] = bytes(out).decode('latin-1')
    res['stderr'] = bytes(err).decode('latin-1')
    return res


def baselines(progs, cmds, work, timeout):
    """Status and stdout of every command without vprof (twice: they must
    agree, or the program is not deterministic and the soak means nothing)."""
    base = {}
    env = clean_env()
    for v, p in progs.items():
        for name, tail in cmds.items():
            runs = [run_prog([p['exe']] + tail, env, work, timeout,
                             term_after=0.05 if name == 'spin' else None) for _ in range(2)]
            for r in runs:
                if r['hang'] or r['stderr'] or r['stray']:
                    raise SystemExit('soak: %s %s misbehaves without vprof: %r' % (v, tail, r))
            a, b = runs
            if (a['status'], a['stdout']) != (b['status'], b['stdout']):
                raise SystemExit('soak: %s %s is not deterministic' % (v, tail))
            base[v, name] = {'status': a['status'], 'stdout': a['stdout'],
                             'wall': min(a['wall'], b['wall']), 'cpu': min(a['cpu'], b['cpu'])}
    return base


def peer(cfg):
    """CPU time and RSS of the same command under vprof with the valid base
    metadata, same ticks (the best of two; measured once per worker): what
    profiling costs without hostile metadata."""
    key = (cfg['variant'], cfg['cmd'], cfg['env']['VPROF_TIMER'], cfg['env']['VPROF_HZ'])
    if key not in W['peers']:
        prog = W['progs'][cfg['variant']]
        d = os.path.join(W['work'], 'cases', 'peer-%d' % os.getpid())
        runs = []
        for _ in range(2):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            env = clean_env()
            env.update(LD_PRELOAD=W['lib'], VPROF_OUT=os.path.join(d, 'out'),
                       VPROF_META=prog['base'], VPROF_TIMER=key[2], VPROF_HZ=key[3])
            runs.append(run_prog([prog['exe']] + W['cmds'][cfg['cmd']], env, d, W['timeout']))
        shutil.rmtree(d, ignore_errors=True)
        W['peers'][key] = (min(r['cpu'] for r in runs), min(r['rss_kb'] for r in runs))
    return W['peers'][key]


# ---------------------------------------------------------------- one case (worker)

W = {}      # worker state: set by init()


def init(state):
    W.update(state)
    W['ctx'] = {v: gen.load_context(p['ctx']) for v, p in state['progs'].items()}
    W['peers'] = {}
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def case_config(seed, i, term_every, term_max):
    """Everything about case i but its metadata, from its own random stream."""
    r = random.Random('vprof-soak-run/%s/%d' % (seed, i))
    cfg = {'variant': 'o2pie' if r.random() < 0.7 else 'o0nopie'}
    cfg['cmd'] = 'spin' if term_every and r.randrange(term_every) == 0 else \
        r.choice(['work', 'threads', 'fork', 'mix'])
    env = {}
    if r.random() < 0.6:
        env['VPROF_TIMER'] = 'perf'
        env['VPROF_HZ'] = str(r.choice([4000, 10000, 20000]))
    else:
        env['VPROF_TIMER'] = 'posix'
        env['VPROF_HZ'] = str(r.choice([1000, 4000]))
    knobs = [('VPROF_UNWIND', ['0', '1', '8', '64']), ('VPROF_UNWIND_COUNT', ['all']),
             ('VPROF_READ', ['pipe']), ('VPROF_TABLE_DIV', ['1', '64', '4096']),
             ('VPROF_MAX_SAMPLES', ['100', '10000']), ('VPROF_TICK_READS', ['1', '4096']),
             ('VPROF_TICK_US', ['50', '5000'])]
    for k, vals in knobs:
        if r.random() < 0.06:
            env[k] = r.choice(vals)
    cfg['env'] = env
    cfg['term_after'] = round(r.uniform(0, term_max), 3) if cfg['cmd'] == 'spin' else None
    return cfg


def layouts(outdir):
    """vpcheck layout of every process's log (the one reader of the format)."""
    res = []
    names = sorted(n for n in os.listdir(outdir) if n.startswith('layout.')) \
        if os.path.isdir(outdir) else []
    for n in names:
        p = subprocess.run([W['vpcheck'], 'layout', os.path.join(outdir, n)],
                           capture_output=True, text=True)
        w = p.stdout.split()
        if p.returncode or len(w) < 16:
            res.append({'name': n, 'error': (p.stderr or p.stdout).strip()})
            continue
        res.append({'name': n, 'status': w[0], 'has_end': int(w[1]), 'n_vars': int(w[2]),
                    'ticks': int(w[8]),
                    'faults': int(w[9]), 'cut': int(w[11]), 'overdue': int(w[12]),
                    'samples': int(w[14]), 'dropped': int(w[15])})
    return res


def check(cfg, meta, r, logs, base):
    """-> (failures, outcome): what went wrong, and what kind of run it was."""
    fail = []
    st = r['status']
    if r['hang']:
        fail.append('hang' if r['term_ms'] is None else 'sigterm-ignored')
    elif st < 0 and st != base['status']:
        fail.append('signal %d' % -st)
    elif st != base['status']:
        fail.append('status %d != %d' % (st, base['status']))
    if not r['hang'] and r['stdout'] != base['stdout']:
        fail.append('stdout differs')
    if r['stray']:
        fail.append('processes left behind')
    # stderr: only known lines, each kind within its count
    nproc = max(len(logs), 1)
    seen = collections.Counter()
    errline = None
    for line in r['stderr'].splitlines():
        for kind, rx, _ in STDERR_KINDS:
            if rx.match(line):
                seen[kind] += 1
                if kind == 'meta-error':
                    errline = line
                break
        else:
            fail.append('stderr: %s' % line[:200])
    limit = {'once': 1, 'proc': nproc, 'thread': nproc * 4}
    for kind, _, per in STDERR_KINDS:
        if seen[kind] > limit[per]:
            fail.append('stderr: %d %s lines for %d processes' % (seen[kind], kind, nproc))
    # layout logs: one per process, readable, complete, agreeing on the metadata
    statuses = set()
    for lg in logs:
        if 'error' in lg:
            fail.append('layout %s unreadable: %s' % (lg['name'], lg['error'][:200]))
            continue
        statuses.add(lg['status'])
        if not lg['has_end'] and not r['hang']:
            fail.append('layout %s has no end line' % lg['name'])
    if not logs and not r['hang']:
        fail.append('no layout log')
    if len(statuses) > 1:
        fail.append('processes disagree on the metadata: %s' % sorted(statuses))
    rejected = 'error' in statuses
    if rejected:
        if errline is None:
            fail.append('metadata rejected without a message')
        elif meta not in errline or not re.search(r'offset \d+', errline):
            fail.append('rejection message names no file or offset: %s' % errline[:200])
        if len(r['stderr'].splitlines()) != 1:
            fail.append('rejected, but %d lines on stderr' % len(r['stderr'].splitlines()))
    elif errline is not None:
        fail.append('message on stderr but the metadata was accepted: %s' % errline[:200])
    elif statuses == {'ok'}:
        with open(meta, 'rb') as f:
            n_vars = gen.HDR.unpack(f.read(64))[4]
        for lg in logs:
            if lg.get('n_vars', n_vars) != n_vars:
                fail.append('layout %s lists %d of %d variables' % (lg['name'], lg['n_vars'], n_vars))
    ok = [lg for lg in logs if 'error' not in lg]
    tot = {k: sum(lg[k] for lg in ok) for k in ('ticks', 'faults', 'cut', 'overdue', 'samples',
                                                'dropped')}
    if rejected:
        why = re.sub(r'.*offset \d+: ', '', errline or '')
        why = re.sub(r'\(profiling continues without values\)$', '', why)
        why = re.sub(r'\d+', 'N', re.sub(r'\b[0-9a-f]{6,}\b', 'HEX', why)).strip()
        outcome = {'class': 'rejected', 'why': why}
    else:
        outcome = {'class': 'sampled' if tot['samples'] else 'accepted, no values'}
    outcome.update(tot)
    outcome['procs'] = len(logs)
    return fail, outcome


def write_repro(d, cfg, case, meta, r, fail, argv, env_add):
    os.makedirs(d, exist_ok=True)
    shutil.copy(meta, os.path.join(d, 'meta.vmeta'))
    if os.path.exists(meta + '.txt'):
        shutil.copy(meta + '.txt', os.path.join(d, 'meta.txt'))
    shutil.copy(argv[0], os.path.join(d, 'prog_soak'))
    env = ' '.join('%s=%s' % kv for kv in sorted(env_add.items()))
    term = cfg['term_after'] is not None
    with open(os.path.join(d, 'repro.sh'), 'w') as f:
        f.write('#!/bin/sh\n# soak case %s (class %s): %s\n' % (case['id'], case['cls'],
                                                                 '; '.join(fail)))
        f.write('# expected: status %s, stdout as without vprof (./prog_soak %s)\n'
                % (W['base'][cfg['variant'], cfg['cmd']]['status'], ' '.join(argv[1:])))
        if term:
            f.write('# the soak sent SIGTERM %.3f s after the first line of stdout\n'
                    % cfg['term_after'])
        f.write('cd "$(dirname "$0")" && rm -rf out\n')
        f.write('exec env VPROF_OUT=out VPROF_META="$PWD/meta.vmeta" %s LD_PRELOAD=%s '
                './prog_soak %s\n' % (env, W['lib'], ' '.join(argv[1:])))
    os.chmod(os.path.join(d, 'repro.sh'), 0o755)
    with open(os.path.join(d, 'outcome.txt'), 'w') as f:
        f.write('failures: %s\nstatus: %s\nwall: %.2f s\nterm_ms: %s\n--- stdout\n%s--- stderr\n%s'
                % ('; '.join(fail), r['status'], r['wall'], r['term_ms'], r['stdout'],
                   r['stderr']))
    if r.get('hang_report'):
        with open(os.path.join(d, 'hang.txt'), 'w') as f:
            f.write(r['hang_report'])


def run_case(i):
    seed = W['seed']
    cfg = case_config(seed, i, W['term_every'], 0.05 if W['quick'] else 0.2)
    d = os.path.join(W['work'], 'cases', str(i))
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    meta = os.path.join(d, 'meta.vmeta')
    case = {'id': '%s/%d' % (seed, i), 'index': i, 'variant': cfg['variant'], 'cmd': cfg['cmd'],
            'env': cfg['env']}
    try:
        case['cls'] = gen.materialize(W['ctx'][cfg['variant']], seed, i, meta, W['mkmeta'])
    except Exception as e:      # a generator bug, not a runtime failure: counted apart
        case.update(cls='?', gen_error=str(e)[:300], failures=[], outcome={'class': 'gen-error'})
        shutil.rmtree(d, ignore_errors=True)
        return case
    prog = W['progs'][cfg['variant']]['exe']
    argv = [prog] + W['cmds'][cfg['cmd']]
    env = clean_env()
    env_add = dict(cfg['env'])
    env.update(env_add, LD_PRELOAD=W['lib'], VPROF_OUT=os.path.join(d, 'out'), VPROF_META=meta)
    base = W['base'][cfg['variant'], cfg['cmd']]
    r = run_prog(argv, env, d, W['timeout'], cfg['term_after'])
    logs = layouts(os.path.join(d, 'out'))
    fail, outcome = check(cfg, meta, r, logs, base)
    case.update(failures=fail, outcome=outcome, wall=round(r['wall'], 3),
                base_wall=round(base['wall'], 3), cpu=round(r['cpu'], 3),
                base_cpu=round(base['cpu'], 3), rss_kb=r['rss_kb'], term_ms=r['term_ms'],
                meta_bytes=os.path.getsize(meta))
    if W['peers_on'] and cfg['term_after'] is None and not r['hang']:
        case['peer_cpu'], case['peer_rss_kb'] = peer(cfg)
    if fail:
        rd = os.path.join(W['repro'], '%s-%d' % (seed, i))
        write_repro(rd, cfg, case, meta, r, fail, argv, env_add)
        case['repro'] = rd
    shutil.rmtree(d, ignore_errors=True)
    return case


# ---------------------------------------------------------------- summary

def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0


def summarize(cases, args, elapsed, load):
    n = len(cases)
    failed = [c for c in cases if c['failures']]
    kinds = collections.Counter(f.split(':')[0].split(' ')[0] for c in failed
                                for f in c['failures'])
    oc = collections.Counter(c['outcome']['class'] for c in cases)
    ran = [c for c in cases if 'wall' in c]
    flags = collections.Counter()
    for c in ran:
        o = c['outcome']
        for k in ('faults', 'cut', 'overdue', 'dropped'):
            if o.get(k):
                flags[k] += 1
    why = collections.Counter(c['outcome']['why'] for c in ran if c['outcome']['class'] == 'rejected')
    by_cls = {}
    for c in cases:
        t = by_cls.setdefault(c['cls'], collections.Counter())
        t['files'] += 1
        t[c['outcome']['class']] += 1
        t['failed'] += bool(c['failures'])
    term = [c for c in ran if c['term_ms'] is not None]
    term_ms = [c['term_ms'] for c in term if c['term_ms'] != float('inf')]
    ratio = [c['wall'] / max(c['base_wall'], 1e-3) for c in ran if c['term_ms'] is None]
    peered = [c for c in ran if 'peer_cpu' in c]
    pr = [c['cpu'] / max(c['peer_cpu'], 1e-3) for c in peered]
    rss = [c['rss_kb'] - c['peer_rss_kb'] for c in peered]
    slowest = sorted(peered, key=lambda c: -c['cpu'] / max(c['peer_cpu'], 1e-3))[:5]
    return {
        'seed': args.seed, 'files': n, 'jobs': args.jobs, 'quick': args.quick,
        'elapsed_s': round(elapsed, 1), 'load_start': load[0], 'load_end': load[1],
        'failed': len(failed), 'crashes': sum(1 for c in failed
                                              if any(f.startswith('signal') for f in c['failures'])),
        'hangs': kinds.get('hang', 0), 'sigterm_ignored': kinds.get('sigterm-ignored', 0),
        'failure_kinds': dict(kinds), 'gen_errors': oc.get('gen-error', 0),
        'outcomes': dict(oc), 'flags': dict(flags), 'rejection_reasons': dict(why.most_common()),
        'timers': dict(collections.Counter(c['env']['VPROF_TIMER'] for c in cases)),
        'modes': dict(collections.Counter(c['cmd'] for c in cases)),
        'sigterm_cases': len(term), 'sigterm_ms_median': round(statistics.median(term_ms), 1)
        if term_ms else None, 'sigterm_ms_max': round(max(term_ms), 1) if term_ms else None,
        'wall_s_median': round(pct([c['wall'] for c in ran], 0.5), 3),
        'wall_s_p99': round(pct([c['wall'] for c in ran], 0.99), 3),
        'wall_s_max': round(max([c['wall'] for c in ran], default=0), 3),
        'slowdown_median': round(pct(ratio, 0.5), 2), 'slowdown_p99': round(pct(ratio, 0.99), 2),
        'slowdown_max': round(max(ratio, default=0), 2),
        'peer_cpu_ratio_median': round(pct(pr, 0.5), 2), 'peer_cpu_ratio_p99': round(pct(pr, 0.99), 2),
        'peer_cpu_ratio_max': round(max(pr, default=0), 2),
        'peer_cpu_ratio_over_5': sum(x > 5 for x in pr),
        'peer_rss_extra_mb_p99': round(pct(rss, 0.99) / 1024, 1),
        'peer_rss_extra_mb_max': round(max(rss, default=0) / 1024, 1),
        'slowest': [{'id': c['id'], 'cls': c['cls'], 'cmd': c['cmd'], 'env': c['env'],
                     'cpu': c['cpu'], 'peer_cpu': c['peer_cpu'], 'wall': c['wall'],
                     'meta_bytes': c['meta_bytes']} for c in slowest],
        'ticks': sum(c['outcome'].get('ticks', 0) for c in ran),
        'samples': sum(c['outcome'].get('samples', 0) for c in ran),
        'by_class': {k: dict(v) for k, v in sorted(by_cls.items())},
        'failures': [{'id': c['id'], 'cls': c['cls'], 'failures': c['failures'],
                      'repro': c.get('repro')} for c in failed][:200],
    }


def print_summary(s):
    p = print
    p('soak: %d files (seed %s), %.0f s with %d jobs, load %s -> %s'
      % (s['files'], s['seed'], s['elapsed_s'], s['jobs'], s['load_start'], s['load_end']))
    p('  failed %d: crashes %d, hangs %d, SIGTERM ignored %d %s'
      % (s['failed'], s['crashes'], s['hangs'], s['sigterm_ignored'], s['failure_kinds'] or ''))
    p('  outcomes: %s' % ', '.join('%s %d' % kv for kv in sorted(s['outcomes'].items())))
    p('  cases with faults %d, budget cuts %d, overdue ticks %d, dropped samples %d'
      % tuple(s['flags'].get(k, 0) for k in ('faults', 'cut', 'overdue', 'dropped')))
    p('  timers %s; modes %s; SIGTERM cases %d, median %s ms, max %s ms'
      % (s['timers'], s['modes'], s['sigterm_cases'], s['sigterm_ms_median'], s['sigterm_ms_max']))
    p('  wall per case: median %.2f s, p99 %.2f s, max %.2f s; vs. without vprof: median %.2fx, '
      'p99 %.2fx, max %.2fx' % (s['wall_s_median'], s['wall_s_p99'], s['wall_s_max'],
                                 s['slowdown_median'], s['slowdown_p99'], s['slowdown_max']))
    if s['peer_cpu_ratio_max']:
        p('  CPU vs. the same run with valid metadata: median %.2fx, p99 %.2fx, max %.2fx, '
          '%d cases over 5x; extra RSS p99 %.1f MB, max %.1f MB'
          % (s['peer_cpu_ratio_median'], s['peer_cpu_ratio_p99'], s['peer_cpu_ratio_max'],
             s['peer_cpu_ratio_over_5'], s['peer_rss_extra_mb_p99'], s['peer_rss_extra_mb_max']))
        for c in s['slowest']:
            p('    %s %s %s %s: %.2f s CPU vs %.2f s' % (c['id'], c['cls'], c['cmd'], c['env'],
                                                      c['cpu'], c['peer_cpu']))
    p('  %d ticks, %d value samples in all' % (s['ticks'], s['samples']))
    p('  rejection reasons: %s' % '; '.join('%s %d' % kv for kv in
                                            list(s['rejection_reasons'].items())[:12]))
    p('  %-14s %6s %9s %9s %8s %7s' % ('class', 'files', 'rejected', 'no-values', 'sampled',
                                       'failed'))
    for k, t in s['by_class'].items():
        p('  %-14s %6d %9d %9d %8d %7d' % (k, t['files'], t.get('rejected', 0),
                                           t.get('accepted, no values', 0), t.get('sampled', 0),
                                           t.get('failed', 0)))
    for f in s['failures'][:20]:
        p('  FAIL %s (%s): %s  -> %s' % (f['id'], f['cls'], '; '.join(f['failures']), f['repro']))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--files', type=int, default=10000)
    ap.add_argument('--seed', default='1')
    ap.add_argument('--start', type=int, default=0, help='first case index')
    ap.add_argument('--only', help='only cases of these generator classes (a,b)')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--work', default=os.path.join(ROOT, 'build', 'bench', 'soak'))
    ap.add_argument('--repro', help='reproducers (default WORK/repro)')
    ap.add_argument('--out', help='JSON summary')
    ap.add_argument('--quick', action='store_true',
                    help='an eighth of the work per run, no peer runs (the CI test)')
    ap.add_argument('--lib', default=os.path.join(ROOT, 'build', 'lib', 'libvprof.so'))
    ap.add_argument('--term-every', type=int, default=10, help='1 case in K gets SIGTERM')
    ap.add_argument('--timeout', type=float, default=60, help='seconds before a case is a hang')
    args = ap.parse_args()
    work = os.path.abspath(args.work)
    repro = os.path.abspath(args.repro or os.path.join(work, 'repro'))
    tools = {'vpcheck': os.path.join(ROOT, 'build', 'test-bin', 'vpcheck'),
             'mkmeta': os.path.join(ROOT, 'build', 'test-bin', 'mkmeta'),
             'vprof_meta': os.path.join(ROOT, 'build', 'bin', 'vprof-meta')}
    for t in list(tools.values()) + [args.lib]:
        if not os.path.exists(t):
            raise SystemExit('soak: %s is missing (make first)' % t)
    os.makedirs(work, exist_ok=True)
    shutil.rmtree(os.path.join(work, 'cases'), ignore_errors=True)
    if not args.repro:          # the default place holds this run's only
        shutil.rmtree(repro, ignore_errors=True)
    t0 = time.monotonic()
    load0 = os.getloadavg()[0]
    progs = build(work, tools['vprof_meta'])
    cmds = commands(args.quick)
    base = baselines(progs, cmds, work, args.timeout)
    state = {'seed': args.seed, 'work': work, 'repro': repro, 'progs': progs, 'cmds': cmds,
             'base': base, 'lib': os.path.abspath(args.lib), 'vpcheck': tools['vpcheck'],
             'mkmeta': tools['mkmeta'], 'timeout': args.timeout, 'term_every': args.term_every,
             'peers_on': not args.quick, 'quick': args.quick}
    cases = []
    idx = range(args.start, args.start + args.files)
    if args.only:               # the first FILES cases of these classes
        want, idx, i = set(args.only.split(',')), [], args.start
        while len(idx) < args.files:
            if gen.class_of(args.seed, i) in want:
                idx.append(i)
            i += 1
    log = open(os.path.join(work, 'cases.jsonl'), 'w')
    with multiprocessing.Pool(args.jobs, init, (state,)) as pool:
        for c in pool.imap_unordered(run_case, idx):
            cases.append(c)
            log.write(json.dumps(c) + '\n')
            if c['failures']:
                print('soak: FAIL %s (%s): %s -> %s' % (c['id'], c['cls'], '; '.join(c['failures']),
                                                         c.get('repro')), flush=True)
            if len(cases) % max(args.files // 10, 1) == 0:
                print('soak: %d/%d files, %d failed, %.0f s' % (
                    len(cases), args.files, sum(bool(x['failures']) for x in cases),
                    time.monotonic() - t0), flush=True)
    log.close()
    s = summarize(sorted(cases, key=lambda c: c['index']), args, time.monotonic() - t0,
                  (round(load0, 1), round(os.getloadavg()[0], 1)))
    print_summary(s)
    if args.out:
        with open(args.out, 'w') as f:
            json.dump(s, f, indent=1, sort_keys=True)
            f.write('\n')
    return 1 if s['failed'] or s['gen_errors'] else 0


if __name__ == '__main__':
    sys.exit(main())
