"""Usage: python3 scripts/admission_replay.py timings.csv charges.json

charges.json: {"image": bytes of a device-tx point's image, "image_ex": bytes of an extended
(cfc-ex, afc-ex, wal) point's image, "job": {strategy or "strategy max_c=N" or
"strategy frames=N": bytes charged}, "job_pg": {strategy: bytes} for the PostgreSQL-trace
points, "recovery": bytes a recovering point adds, "budget": bytes} (runner::image_bytes,
runner::job_bytes, runner::MEM_BUDGET_BYTES).

Replays full-scale Flag Commit's points (timings.csv of a measured run: order, task, wall
time) through the runner's admission rule with two workers, under given charges, and prints
the makespan. Approximation of runner::Sched: groups from the labels; a group's image is
charged from its builder's start until its last member has started; a worker takes the first
waiting job (jobs of a group whose image is ready first, then figure order) whose charge fits,
or any job when nothing runs."""
import csv, sys, json, re
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r['paper'] == 'flagcommit']
ch = json.load(open(sys.argv[2]))  # {"image": bytes, "job": {strategy: bytes}, "budget": bytes}
def strat(label):
    l = label.split()[1]
    return l
def group(label, task):
    s = label.split()[1]
    if 'PostgreSQL' in label: return 'pg-ex' if s in ('cfc-ex','afc-ex','wal') else None
    if 'fresh device' in label or 'flag reprogrammed' in label: return None
    if 'old preparation' in label:
        return 'old-ex' if s in ('cfc-ex','afc-ex','wal') else None
    if s in ('cfc-ex','afc-ex','wal'): return 'ex'
    return 'dev-' + s
jobs = []
for r in rows:
    if r['task'] == 'same': continue
    g = group(r['label'], r['task'])
    s = strat(r['label'])
    key = s
    m = re.search(r'max_c=(\d)', r['label'])
    if m: key = s + ' max_c=' + m.group(1)
    m = re.search(r'(\d+) frames', r['label'])
    if m: key = s + ' frames=' + m.group(1)
    jb = ch['job'].get(key, ch['job'].get(s))
    if 'PostgreSQL' in r['label']: jb = ch['job_pg'].get(s, jb)
    recov = r['task'] == 'last' or (r['label'].endswith('δ=5%') and s in ('cfc','afc','bpcc','scc'))
    if recov: jb += ch['recovery']
    jobs.append(dict(label=r['label'], g=g, wall=float(r['wall_s']), bytes=jb, builder=r['task']=='builder'))
budget = ch['budget']
def img(g): return ch['image_ex'] if g and g.endswith('ex') else ch['image']
members = {}
for j in jobs:
    if j['g']: members.setdefault(j['g'], []).append(j)
t = 0.0; running = []; waiting = list(jobs); started = {}; alive = {}; peak = 0; trace = []
def charges():
    return sum(x['bytes'] for _, x in running) + sum(img(g) for g in alive if alive[g])
while waiting or running:
    while len(running) < 2 and waiting:
        pick = None
        order = sorted(range(len(waiting)), key=lambda i: (0 if waiting[i]['g'] in alive else 1, i))
        for i in order:
            j = waiting[i]
            extra = j['bytes'] + (img(j['g']) if j['g'] and j['g'] not in alive else 0)
            # A follower may not start before its builder.
            if j['g'] and not j['builder'] and j['g'] not in alive: continue
            if not running or charges() + extra <= budget:
                pick = i; break
        if pick is None: break
        j = waiting.pop(pick)
        if j['g'] and j['g'] not in alive: alive[j['g']] = True
        running.append((t + j['wall'], j))
        if j['g'] and all(m in [x for _, x in running] or m not in waiting for m in members[j['g']]) and not any(m in waiting for m in members[j['g']]):
            alive[j['g']] = False
        peak = max(peak, charges())
    running.sort(key=lambda x: x[0])
    end, j = running.pop(0)
    t = end
print(f"serial {sum(j['wall'] for j in jobs):.0f} s, makespan {t:.0f} s, peak charges {peak/2**30:.2f} GiB, budget {budget/2**30:.2f} GiB")
