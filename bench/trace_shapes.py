#!/usr/bin/env python3
"""[MEM] logs of trace shapes real programs take, for timing `edgemem analyze`
where structures grow with the live set, the holes, the sites or the pools
(docs/benchmarks.md, "Large live sets and fragmented heaps").
usage: trace_shapes.py SHAPE NLINES OUTFILE   (seeded: the same file each time)
H=holes (frag_shrink_big, midgap_top) and P=pools (many_pools, arenas_reset) in the environment.
"""
import random, sys

HEAP_BASE = 0x20000000
HEAP_SIZE = 0x40000000


class Out:
    def __init__(self, path):
        self.f = open(path, 'w', buffering=1 << 20)
        self.buf = []
        self.t = 0
        self.n = 0

    def e(self, s):
        self.t += 7
        self.buf.append(f"[MEM][{self.t}] {s}\n")
        self.n += 1
        if len(self.buf) >= 65536:
            self.f.write(''.join(self.buf)); self.buf.clear()

    def close(self):
        self.f.write(''.join(self.buf)); self.f.close()


class SizeClassHeap:
    """Bump pointer + per-size-class LIFO free lists (dlmalloc-ish bins).
    hdr=16 puts a glibc-style header before each block (blocks land mid-gap)."""
    def __init__(self, base=HEAP_BASE, hdr=0):
        self.top = base; self.bins = {}; self.hdr = hdr; self.live = {}

    def alloc(self, size):
        cls = (size + self.hdr + 15) & ~15
        b = self.bins.get(cls)
        if b:
            a = b.pop()
        else:
            a = self.top + self.hdr; self.top += cls
        self.live[a] = cls
        return a

    def free(self, a):
        cls = self.live.pop(a)
        self.bins.setdefault(cls, []).append(a)


def pool_decl(o, name='heap', base=HEAP_BASE, size=HEAP_SIZE, kind='heap'):
    if kind == 'heap':
        o.e(f"POOL name={name} kind=heap size={hex(size)} base={hex(base)}")
    else:
        o.e(f"POOL name={name} kind=arena size={hex(size)}")


def rsize(r):
    return r.choice((16, 24, 32, 48, 64, 96, 128, 200, 256, 512, 1024, 4096))


def alloc_random(o, h, live, r, site, sites):
    """One block of a random size, kept in `live`, from one of `sites` lines of `site`."""
    a = h.alloc(s := rsize(r)); live.append(a)
    o.e(f"ALLOC addr={hex(a)} size={s} site={site}:{r.randrange(sites)}")


def take_random(live, r):
    """Removes and returns a random entry of `live` (swapped with the last)."""
    i = r.randrange(len(live)); live[i], live[-1] = live[-1], live[i]
    return live.pop()


def free_random(o, h, live, r):
    a = take_random(live, r); h.free(a); o.e(f"FREE addr={hex(a)}")


# ---------------------------------------------------------------- shapes
def baseline(o, n, r):
    """steady churn, ~1000 live blocks, 100 sites"""
    pool_decl(o); h = SizeClassHeap(); live = []
    while o.n < n:
        if len(live) < 1000 or r.random() < 0.5:
            alloc_random(o, h, live, r, "m.c", 100)
        else:
            free_random(o, h, live, r)


def many_live(o, n, r, target=300000):
    """ramp to 300k live blocks, then random churn"""
    pool_decl(o); h = SizeClassHeap(); live = []
    while o.n < n:
        if len(live) < target or r.random() < 0.5:
            alloc_random(o, h, live, r, "m.c", 100)
        else:
            free_random(o, h, live, r)


def many_sites(o, n, r):
    """50k distinct call sites (stack-like names), churn ~2000 live"""
    pool_decl(o); h = SizeClassHeap(); live = []
    while o.n < n:
        if len(live) < 2000 or r.random() < 0.5:
            a = h.alloc(s := rsize(r)); live.append(a)
            k = r.randrange(50000)
            o.e(f"ALLOC addr={hex(a)} size={s} site=f{k}%20(src/mod{k % 97}.cc:{k});main%20(main.cc:1)")
        else:
            free_random(o, h, live, r)


def many_threads(o, n, r):
    """5000 threads; 30% of frees happen on another thread"""
    pool_decl(o); h = SizeClassHeap(); live = []
    while o.n < n:
        if len(live) < 3000 or r.random() < 0.5:
            a = h.alloc(s := rsize(r)); live.append((a, t := r.randrange(5000)))
            o.e(f"ALLOC addr={hex(a)} size={s} site=m.c:{r.randrange(100)} thread={t}")
        else:
            a, t = take_random(live, r); h.free(a)
            if r.random() < 0.3: t = r.randrange(5000)
            o.e(f"FREE addr={hex(a)} thread={t}")


def many_infers(o, n, r):
    """INFER begin/end pairs with 2 alloc+free each (numbered)"""
    pool_decl(o); h = SizeClassHeap(); k = 0
    # a few persistent blocks
    for _ in range(50):
        a = h.alloc(64); o.e(f"ALLOC addr={hex(a)} size=64 site=init.c:1")
    while o.n < n:
        k += 1
        o.e(f"INFER begin {k}")
        a = h.alloc(s := rsize(r)); o.e(f"ALLOC addr={hex(a)} size={s} site=inf.c:{r.randrange(20)}")
        b = h.alloc(s2 := rsize(r)); o.e(f"ALLOC addr={hex(b)} size={s2} site=inf.c:{r.randrange(20)}")
        o.e(f"FREE addr={hex(b)}"); h.free(b)
        o.e(f"FREE addr={hex(a)}"); h.free(a)
        o.e(f"INFER end {k}")


def many_infers_leaky(o, n, r):
    """INFER pairs; each inference leaks one small block (live grows with inferences)"""
    pool_decl(o); h = SizeClassHeap(); k = 0
    while o.n < n:
        k += 1
        o.e(f"INFER begin {k}")
        a = h.alloc(s := rsize(r)); o.e(f"ALLOC addr={hex(a)} size={s} site=inf.c:{r.randrange(20)}")
        b = h.alloc(32); o.e(f"ALLOC addr={hex(b)} size=32 site=leak.c:{r.randrange(5)}")
        o.e(f"FREE addr={hex(a)}"); h.free(a)
        o.e(f"INFER end {k}")


def many_pools(o, n, r):
    """P (env P, default 500) heap pools each with its own base; churn across them"""
    import os
    P = int(os.environ.get('P', 500)); heaps = []; lives = []
    for p in range(P):
        base = 0x10000000 + p * 0x100000
        pool_decl(o, f"p{p}", base, 0x100000)
        heaps.append(SizeClassHeap(base)); lives.append([])
    while o.n < n:
        p = r.randrange(P); h = heaps[p]; live = lives[p]
        if len(live) < 10 or (r.random() < 0.5 and len(live) < 200):
            a = h.alloc(s := r.choice((16, 32, 64, 128))); live.append(a)
            o.e(f"ALLOC addr={hex(a)} size={s} pool=p{p} site=m.c:{r.randrange(100)}")
        else:
            a = take_random(live, r); h.free(a); o.e(f"FREE addr={hex(a)} pool=p{p}")


def arenas_reset(o, n, r):
    """P (env P, default 200) arenas, bump allocation with offsets, RESET every ~40 allocs"""
    import os
    P = int(os.environ.get('P', 200)); off = [0] * P
    for p in range(P):
        o.e(f"POOL name=a{p} kind=arena size={0x10000}")
    while o.n < n:
        p = r.randrange(P)
        if off[p] > 0 and r.random() < 0.025:
            o.e(f"RESET pool=a{p}"); off[p] = 0; continue
        s = rsize(r) % 1000 + 8
        if off[p] + s > 0x10000:
            o.e(f"RESET pool=a{p}"); off[p] = 0; continue
        o.e(f"ALLOC size={s} align=16 offset={off[p]} pool=a{p} site=ar.c:{r.randrange(50)}")
        off[p] = (off[p] + s + 15) & ~15


def arena_big(o, n, r):
    """one big arena: 50k allocs between resets (tensor-arena-like but huge)"""
    o.e(f"POOL name=arena kind=arena size={1 << 32}")
    off = 0; cnt = 0
    while o.n < n:
        if cnt == 50000:
            o.e("RESET"); off = 0; cnt = 0; continue
        s = rsize(r)
        o.e(f"ALLOC size={s} align=16 offset={off} site=ar.c:{r.randrange(50)}")
        off = (off + s + 15) & ~15; cnt += 1


def arena_lifo(o, n, r):
    """stack-like arena with offsets; 5% frees out of LIFO order"""
    o.e(f"POOL name=arena kind=arena size={1 << 30}")
    stack = []; off = 0
    while o.n < n:
        if len(stack) < 50 or (r.random() < 0.5 and len(stack) < 5000):
            s = rsize(r)
            o.e(f"ALLOC size={s} align=16 offset={off} site=st.c:{r.randrange(50)}")
            stack.append((off, s)); off = (off + s + 15) & ~15
        else:
            if r.random() < 0.05 and len(stack) > 2:
                i = r.randrange(len(stack) - 1)
                of, s = stack.pop(i)
            else:
                of, s = stack.pop()
                off = (stack[-1][0] + stack[-1][1] + 15) & ~15 if stack else 0
            o.e(f"FREE offset={of}")


def realloc_chains(o, n, r):
    """blocks grown by realloc chains of length up to 200 (moving every time)"""
    pool_decl(o); h = SizeClassHeap(); live = []
    while o.n < n:
        if len(live) < 500 or r.random() < 0.3:
            a = h.alloc(s := 16); live.append([a, s])
            o.e(f"ALLOC addr={hex(a)} size={s} site=vec.c:{r.randrange(30)}")
        elif r.random() < 0.9:
            i = r.randrange(len(live)); a, s = live[i]
            ns = s + 16
            b = h.alloc(ns); h.free(a); live[i] = [b, ns]
            o.e(f"REALLOC old={hex(a)} size={ns} addr={hex(b)}")
        else:
            a, s = take_random(live, r); h.free(a); o.e(f"FREE addr={hex(a)}")


def realloc_inplace(o, n, r):
    """a few blocks grown in place by realloc a million times (same address)"""
    pool_decl(o); blocks = []
    for i in range(10):
        a = HEAP_BASE + i * 0x4000000; blocks.append([a, 16])
        o.e(f"ALLOC addr={hex(a)} size=16 site=buf.c:{i}")
    while o.n < n:
        b = blocks[r.randrange(10)]; b[1] = b[1] + 8 if b[1] < 0x3000000 else 16
        o.e(f"REALLOC old={hex(b[0])} size={b[1]} addr={hex(b[0])}")


def unknown_frees(o, n, r):
    """half the events are frees of addresses never allocated (distinct)"""
    pool_decl(o); h = SizeClassHeap(); live = []
    while o.n < n:
        x = r.random()
        if x < 0.5:
            o.e(f"FREE addr={hex(0x60000000 + 16 * r.randrange(10_000_000))}")
        elif len(live) < 1000 or x < 0.75:
            alloc_random(o, h, live, r, "m.c", 100)
        else:
            free_random(o, h, live, r)


def midgap(o, n, r):
    """glibc-like: 16-byte headers, random sizes; every block lands mid-gap,
    holes are reused first-fit-by-class so slivers accumulate. 20k live."""
    pool_decl(o); h = SizeClassHeap(hdr=16); live = []
    while o.n < n:
        if len(live) < 20000 or r.random() < 0.5:
            s = r.randrange(1, 600)
            a = h.alloc(s); live.append(a)
            o.e(f"ALLOC addr={hex(a)} size={s} site=m.c:{r.randrange(100)}")
        else:
            free_random(o, h, live, r)


def midgap_split(o, n, r):
    """5000 pinned blocks make 5000 64K holes; each alloc lands at a random
    hole's start+16..+64 (mid-gap, splitting it), ~20k live, random frees"""
    pool_decl(o)
    holes = []; a = HEAP_BASE
    for i in range(5000):
        o.e(f"ALLOC addr={hex(a)} size=32 site=pin.c:1"); holes.append(a + 32); a += 0x20000
    live = []
    while o.n < n:
        if len(live) < 20000 or r.random() < 0.5:
            j = r.randrange(len(holes)); s = r.randrange(8, 256)
            x = holes[j] + 16 * r.randrange(1, 5)
            if x + s > HEAP_BASE + (j + 1) * 0x20000:   # hole used up: restart it
                x = HEAP_BASE + j * 0x20000 + 48
            holes[j] = x + s
            live.append(x)
            o.e(f"ALLOC addr={hex(x)} size={s} site=m.c:{r.randrange(100)}")
        else:
            o.e(f"FREE addr={hex(take_random(live, r))}")


def spread64(o, n, r):
    """undeclared pool, addresses in 6 far-apart regions over the 64-bit space"""
    regions = [0x10000, 0x55d0_0000_0000, 0x7f2d_2400_0000, 0x7ffc_0000_0000,
               0xffff_8000_0000_0000, 0x0000_1000_0000_0000]
    hs = [SizeClassHeap(b) for b in regions]; live = []
    while o.n < n:
        if len(live) < 5000 or r.random() < 0.5:
            k = r.randrange(len(hs)); a = hs[k].alloc(s := rsize(r)); live.append((k, a))
            o.e(f"ALLOC addr={hex(a)} size={s} pool=malloc site=m.c:{r.randrange(100)} thread={r.randrange(8)}")
        else:
            k, a = take_random(live, r); hs[k].free(a); o.e(f"FREE addr={hex(a)} pool=malloc")


def spread64_decl(o, n, r):
    """declared huge heap pool (whole 48-bit space), blocks in far-apart regions"""
    o.e(f"POOL name=heap kind=heap size={hex(1 << 47)} base=0x0")
    regions = [0x10000, 0x55d0_0000_0000, 0x7f2d_2400_0000, 0x7ffc_0000_0000, 0x1000_0000_0000]
    hs = [SizeClassHeap(b) for b in regions]; live = []
    while o.n < n:
        if len(live) < 5000 or r.random() < 0.5:
            k = r.randrange(len(hs)); a = hs[k].alloc(s := rsize(r)); live.append((k, a))
            o.e(f"ALLOC addr={hex(a)} size={s} site=m.c:{r.randrange(100)}")
        else:
            k, a = take_random(live, r); hs[k].free(a); o.e(f"FREE addr={hex(a)}")


def longlived_short(o, n, r):
    """20k long-lived blocks, then alloc/free pairs of short-lived blocks"""
    pool_decl(o); h = SizeClassHeap()
    for i in range(20000):
        a = h.alloc(s := rsize(r)); o.e(f"ALLOC addr={hex(a)} size={s} site=init.c:{i % 300}")
    while o.n < n:
        a = h.alloc(s := rsize(r)); o.e(f"ALLOC addr={hex(a)} size={s} site=tmp.c:{r.randrange(100)}")
        o.e(f"FREE addr={hex(a)}"); h.free(a)


def leak_growing(o, n, r):
    """steady leak: 2 allocs per free, live grows to ~n/3 blocks; new peak nearly every event"""
    pool_decl(o); h = SizeClassHeap(); live = []
    while o.n < n:
        if not live or r.random() < 0.667:
            alloc_random(o, h, live, r, "leak.c", 200)
        else:
            free_random(o, h, live, r)


def pure_growth(o, n, r):
    """allocations only, never freed (every event a new peak, live = n)"""
    pool_decl(o, size=1 << 34); a = HEAP_BASE
    while o.n < n:
        s = rsize(r); o.e(f"ALLOC addr={hex(a)} size={s} site=g.c:{r.randrange(200)}")
        a += (s + 15) & ~15


def failed_allocs(o, n, r):
    """half the events are ALLOC_FAIL of varied sizes and sites"""
    pool_decl(o); h = SizeClassHeap(); live = []
    while o.n < n:
        x = r.random()
        if x < 0.5:
            o.e(f"ALLOC_FAIL size={r.randrange(1, 1 << 20)} align=8 site=f.c:{r.randrange(5000)}")
        elif len(live) < 1000 or x < 0.75:
            alloc_random(o, h, live, r, "m.c", 100)
        else:
            free_random(o, h, live, r)


def frag_shrink(o, n, r):
    """the already-fixed cliff: thousands of holes, allocations from heap top
    so the largest free gap shrinks every alloc"""
    pool_decl(o); a = HEAP_BASE; holes = []
    for i in range(5000):
        o.e(f"ALLOC addr={hex(a)} size=32 site=h.c:1"); holes.append(a); a += 64
        o.e(f"ALLOC addr={hex(a)} size=32 site=h.c:2"); a += 64
    for x in holes: o.e(f"FREE addr={hex(x)}")
    live = []
    while o.n < n:
        if len(live) < 1000 or r.random() < 0.5:
            s = 64; o.e(f"ALLOC addr={hex(a)} size={s} site=t.c:1"); live.append(a); a += s
        else:
            x = live.pop(0) if r.random() < 0.0 else live.pop()
            o.e(f"FREE addr={hex(x)}")


def frag_shrink_big(o, n, r):
    """frag_shrink with H (env H, default 200000) holes: ramp of H pinned+H
    freed 32-byte blocks, then allocations from the heap top (largest gap
    shrinks every alloc), freeing the newest"""
    import os
    H = int(os.environ.get('H', 200000))
    pool_decl(o, size=1 << 36); a = HEAP_BASE; holes = []
    for i in range(H):
        o.e(f"ALLOC addr={hex(a)} size=32 site=h.c:1"); holes.append(a); a += 64
        o.e(f"ALLOC addr={hex(a)} size=32 site=h.c:2"); a += 64
    for x in holes: o.e(f"FREE addr={hex(x)}")
    live = []
    while o.n < n:
        if len(live) < 1000 or r.random() < 0.5:
            o.e(f"ALLOC addr={hex(a)} size=64 site=t.c:1"); live.append(a); a += 64
        else:
            o.e(f"FREE addr={hex(live.pop())}")


def midgap_top(o, n, r):
    """H (env H, default 200000) 64K holes between pinned blocks; allocations
    alternate between mid-gap (16 bytes into a random hole's free part: a new
    16-byte sliver gap each time) and the heap top (largest gap shrinks);
    the mid-gap blocks are freed FIFO after ~20k (slivers merge again)"""
    import os, collections
    H = int(os.environ.get('H', 200000))
    pool_decl(o, size=1 << 40); a = HEAP_BASE; cur = []
    for i in range(H):
        o.e(f"ALLOC addr={hex(a)} size=32 site=pin.c:1"); cur.append(a + 32); a += 0x10000
    mid = collections.deque(); top = []
    while o.n < n:
        j = r.randrange(H); s = r.randrange(8, 200)
        x = cur[j] + 16
        if x + s > HEAP_BASE + (j + 1) * 0x10000:
            continue
        cur[j] = x + s; mid.append(x)
        o.e(f"ALLOC addr={hex(x)} size={s} site=m.c:{r.randrange(100)}")
        if len(mid) > 20000: o.e(f"FREE addr={hex(mid.popleft())}")
        if len(top) < 100 or r.random() < 0.5:
            o.e(f"ALLOC addr={hex(a)} size=64 site=t.c:1"); top.append(a); a += 64
        else:
            o.e(f"FREE addr={hex(top.pop())}")


def infer_many_live(o, n, r):
    """200k long-lived blocks (from 2000 sites) made before the first
    inference, then INFER begin/end pairs with one alloc+free each"""
    pool_decl(o); h = SizeClassHeap(); k = 0
    for i in range(200000):
        a = h.alloc(s := rsize(r)); o.e(f"ALLOC addr={hex(a)} size={s} site=init.c:{i % 2000}")
    while o.n < n:
        k += 1
        o.e(f"INFER begin {k}")
        a = h.alloc(s := rsize(r)); o.e(f"ALLOC addr={hex(a)} size={s} site=inf.c:{r.randrange(20)}")
        o.e(f"FREE addr={hex(a)}"); h.free(a)
        o.e(f"INFER end {k}")


def marks_counters(o, n, r):
    """many MARK lines and COUNTERs with 20k distinct names, light churn"""
    pool_decl(o); h = SizeClassHeap(); live = []
    while o.n < n:
        x = r.random()
        if x < 0.25:
            o.e(f"MARK phase%20{r.randrange(100000)}")
        elif x < 0.5:
            o.e(f"COUNTER name=c{r.randrange(20000)} value={r.randrange(1 << 20)}")
        elif len(live) < 500 or x < 0.75:
            alloc_random(o, h, live, r, "m.c", 100)
        else:
            free_random(o, h, live, r)


def boots(o, n, r):
    """device restarts: BOOT every ~200 events, 1000 live-ish blocks before each"""
    h = SizeClassHeap(); live = []; t0 = 0
    while o.n < n:
        o.e("BOOT"); pool_decl(o); h = SizeClassHeap(); live = []
        for _ in range(200):
            if len(live) < 50 or r.random() < 0.5:
                alloc_random(o, h, live, r, "m.c", 100)
            else:
                a = live.pop(); h.free(a); o.e(f"FREE addr={hex(a)}")
        o.t = 0  # clock restarts with the device


def timeback(o, n, r):
    """stamps go back every ~100 events (corrupt clock), churn"""
    pool_decl(o); h = SizeClassHeap(); live = []
    while o.n < n:
        if r.random() < 0.01: o.t = max(0, o.t - 100000)
        if len(live) < 1000 or r.random() < 0.5:
            alloc_random(o, h, live, r, "m.c", 100)
        else:
            free_random(o, h, live, r)


SHAPES = {k: v for k, v in globals().items() if callable(v) and v.__doc__ and k not in ('Out', 'SizeClassHeap')}

if __name__ == '__main__':
    shape, n, path = sys.argv[1], int(float(sys.argv[2])), sys.argv[3]
    o = Out(path); SHAPES[shape](o, n, random.Random(1)); o.close()
