//! Host tests of the PMM, after NVIDIA's `uvm_pmm_test.c`: split and merge at every size, no
//! overlap under random churn, states and errors, LRU victim order, the eviction flow, the root
//! chunk cap, and the adapter over the driver's VRAM allocator.

use super::*;
use alloc::string::ToString;

const MIB: u64 = 1 << 20;
const K4: ChunkSize = ChunkSize::Size4K;
const K64: ChunkSize = ChunkSize::Size64K;
const M2: ChunkSize = ChunkSize::Size2M;
/// Where the test source's root chunks start: away from 0 so a base of 0 is never valid.
const POOL: u64 = 0x1_0000_0000;

/// A small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
    }
}

fn pmm(roots: usize, cap: Option<usize>) -> Pmm<SimpleRootSource> {
    Pmm::new(SimpleRootSource::new(POOL, roots), cap)
}

/// Checks the PMM's private invariants against its trees.
fn check_invariants<S: RootChunkSource>(p: &Pmm<S>) {
    let mut want_free: [BTreeSet<u64>; 3] = [BTreeSet::new(), BTreeSet::new(), BTreeSet::new()];
    for (&base, root) in &p.roots {
        assert_eq!(base % ROOT_CHUNK_SIZE, 0);
        let leaves = leaves(&root.tree);
        let pinned = leaves.iter().filter(|l| matches!(l.2, Leaf::TempPinned(_))).count();
        let allocated = leaves.iter().filter(|l| matches!(l.2, Leaf::Allocated(_))).count();
        assert_eq!(root.pinned, pinned, "pinned count of {base:#x}");
        assert_eq!(root.allocated, allocated, "allocated count of {base:#x}");
        // Eager merge: no split node whose children are all free.
        if let RootTree::Split(nodes) = &root.tree {
            assert_eq!(nodes.len(), CHUNKS_64K_PER_ROOT);
            assert!(!nodes.iter().all(|n| *n == Node64::Whole(Leaf::Free)), "root {base:#x} split but all free");
            for n in nodes {
                if let Node64::Split(small) = n {
                    assert!(!small.iter().all(|l| *l == Leaf::Free), "64K node split but all free");
                }
            }
        }
        if !root.evicting {
            for (off, size, leaf) in &leaves {
                if *leaf == Leaf::Free {
                    want_free[size.index()].insert(base + off);
                }
            }
        }
        // On a list exactly when not evicting and holding allocated chunks.
        let on_list = root.lru.is_some();
        assert_eq!(on_list, !root.evicting && allocated > 0, "list membership of {base:#x}");
        if let Some((list, seq)) = root.lru {
            assert_eq!(p.lru[list.index()].get(&seq), Some(&base));
        }
    }
    assert_eq!(p.free, want_free, "free lists");
    let listed: usize = p.lru.iter().map(BTreeMap::len).sum();
    assert_eq!(listed, p.roots.values().filter(|r| r.lru.is_some()).count());
    if let Some(max) = p.max_root_chunks {
        assert!(p.roots.len() <= max);
    }
}

fn alloc_unpinned<S: RootChunkSource>(p: &mut Pmm<S>, size: ChunkSize, owner: u64) -> GpuChunk {
    let c = p.alloc(size, owner).unwrap();
    p.unpin(c).unwrap();
    c
}

#[test]
fn chunk_sizes() {
    assert_eq!(K4.bytes(), 4096);
    assert_eq!(K64.bytes(), 65536);
    assert_eq!(M2.bytes(), 2 * MIB);
    for s in ChunkSize::ALL {
        assert_eq!(ChunkSize::from_bytes(s.bytes()), Some(s));
        assert_eq!(ChunkSize::ALL[s.index()], s);
    }
    assert_eq!(ChunkSize::from_bytes(8192), None);
    assert_eq!(K4.parent(), Some(K64));
    assert_eq!(M2.parent(), None);
    assert_eq!(M2.child(), Some(K64));
    assert_eq!(K4.child(), None);
    let c = GpuChunk { base: POOL + 3 * MIB, size: K4 };
    assert_eq!(c.root_base(), POOL + 2 * MIB);
    assert_eq!(GpuChunk { base: u64::MAX - 4095, size: K64 }.end(), None);
}

#[test]
fn first_small_alloc_splits_lazily_and_second_reuses_the_split_root() {
    let mut p = pmm(4, None);
    let a = p.alloc(K4, 1).unwrap();
    assert_eq!(a, GpuChunk { base: POOL, size: K4 });
    assert_eq!(p.chunk_state(a), Ok(ChunkState::TempPinned));
    let s = p.stats();
    assert_eq!(s.root_chunks, 1);
    assert_eq!(s.count(M2, ChunkState::Split), 1);
    assert_eq!(s.count(K64, ChunkState::Split), 1);
    assert_eq!(s.count(K64, ChunkState::Free), 31);
    assert_eq!(s.count(K4, ChunkState::Free), 15);
    assert_eq!(s.count(K4, ChunkState::TempPinned), 1);
    assert_eq!(s.free_bytes, 2 * MIB - 4096);
    assert_eq!(s.temp_pinned_bytes, 4096);
    assert_eq!(p.chunk_state(GpuChunk { base: POOL, size: M2 }), Ok(ChunkState::Split));
    assert_eq!(p.chunk_state(GpuChunk { base: POOL, size: K64 }), Ok(ChunkState::Split));

    // 64K and more 4K land in the same, already split root, not a new one.
    let b = p.alloc(K64, 2).unwrap();
    assert_eq!(b.base, POOL + 0x10000);
    let c = p.alloc(K4, 3).unwrap();
    assert_eq!(c.base, POOL + 0x1000);
    assert_eq!(p.stats().root_chunks, 1);
    // A 2M chunk needs a whole root.
    let d = p.alloc(M2, 4).unwrap();
    assert_eq!(d.base, POOL + 2 * MIB);
    assert_eq!(p.stats().root_chunks, 2);
    check_invariants(&p);

    for x in [a, b, c, d] {
        p.free(x).unwrap();
    }
    let s = p.stats();
    assert_eq!(s.free_root_chunks, 2);
    assert_eq!(s.count(M2, ChunkState::Free), 2);
    assert_eq!(s.count(K64, ChunkState::Free) + s.count(K4, ChunkState::Free), 0);
    check_invariants(&p);
}

/// Fills one root with chunks of `size`, frees them in random order, and checks the root merges
/// back whole (and only at the very last free).
fn split_merge_one_size(size: ChunkSize, seed: u64) {
    let vram = VramAllocator::new(&[(0x4000_0000, 2 * MIB)], &[]).unwrap();
    let mut p = Pmm::new(VramRootSource::new(vram), Some(1));
    let n = (ROOT_CHUNK_SIZE / size.bytes()) as usize;
    let mut chunks = Vec::new();
    for i in 0..n {
        let c = p.alloc(size, i as u64).unwrap();
        assert_eq!(c.size, size);
        assert_eq!(c.root_base(), 0x4000_0000);
        chunks.push(c);
    }
    let mut bases: Vec<u64> = chunks.iter().map(|c| c.base).collect();
    bases.sort_unstable();
    bases.dedup();
    assert_eq!(bases.len(), n, "distinct chunks");
    assert!(matches!(p.alloc(K4, 0), Err(PmmError::NoMemory { size: K4, root_chunks: 1 })));
    assert_eq!(p.stats().free_bytes, 0);
    assert_eq!(p.stats().count(size, ChunkState::TempPinned), n);
    for (i, c) in chunks.iter().enumerate() {
        assert_eq!(p.owner(*c), Ok(i as u64));
        if i % 2 == 0 {
            p.unpin(*c).unwrap();
        }
    }
    let mut rng = Rng(seed);
    rng.shuffle(&mut chunks);
    let last = chunks.len() - 1;
    for (i, c) in chunks.iter().enumerate() {
        p.free(*c).unwrap();
        if i < last {
            assert_eq!(p.stats().free_root_chunks, 0, "merged too early at free {i}");
            assert_eq!(p.stats().free_bytes, (i as u64 + 1) * size.bytes());
        }
        if i % 37 == 0 {
            check_invariants(&p);
        }
    }
    let s = p.stats();
    assert_eq!(s.free_root_chunks, 1);
    assert_eq!(s.count(M2, ChunkState::Free), 1);
    assert_eq!(s.count(M2, ChunkState::Split), 0);
    assert_eq!(s.free_bytes, 2 * MIB);
    check_invariants(&p);
    // The VRAM allocator has the root until it is released.
    assert_eq!(p.source().vram().stats().free_bytes, 0);
    assert_eq!(p.release_free_roots(), 1);
    assert_eq!(p.stats().root_chunks, 0);
    assert_eq!(p.source().roots_held(), 0);
    let v = p.source().vram().stats();
    assert_eq!((v.free_bytes, v.allocations, v.free_root_chunks), (2 * MIB, 0, 1));
}

#[test]
fn split_merge_4k() {
    split_merge_one_size(K4, 0x1234_5678);
    split_merge_one_size(K4, 0xdead_beef);
}

#[test]
fn split_merge_64k() {
    split_merge_one_size(K64, 7);
}

#[test]
fn split_merge_2m() {
    split_merge_one_size(M2, 9);
}

#[test]
fn mixed_sizes_in_one_root_merge_back() {
    let mut p = pmm(1, None);
    let mut rng = Rng(42);
    let mut live = Vec::new();
    // 16 x 64K, then 4K until full: the root ends split at both levels.
    for i in 0..16 {
        live.push(p.alloc(K64, i).unwrap());
    }
    while let Ok(c) = p.alloc(K4, 99) {
        live.push(c);
    }
    assert_eq!(live.len(), 16 + 16 * 16);
    assert_eq!(p.stats().free_bytes, 0);
    rng.shuffle(&mut live);
    for c in &live {
        p.free(*c).unwrap();
    }
    assert_eq!(p.stats().free_root_chunks, 1);
    check_invariants(&p);
}

#[test]
fn random_churn_never_overlaps() {
    let mut p = pmm(6, None);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // Reference model: base -> (size, owner, unpinned).
    let mut model: BTreeMap<u64, (ChunkSize, u64, bool)> = BTreeMap::new();
    let mut no_memory = 0;
    for step in 0..6000u64 {
        let r = rng.below(100);
        if r < 55 || model.is_empty() {
            let size = match rng.below(10) {
                0 => M2,
                1..=3 => K64,
                _ => K4,
            };
            match p.alloc(size, step) {
                Ok(c) => {
                    assert_eq!(c.size, size);
                    assert_eq!(c.base % size.bytes(), 0);
                    let end = c.end().unwrap();
                    assert!(c.base >= POOL && end <= POOL + 6 * 2 * MIB, "{c} outside the pool");
                    // No live chunk overlaps it: the one before ends by its base, the one after
                    // starts at or after its end.
                    if let Some((&b, &(s, _, _))) = model.range(..c.base).next_back() {
                        assert!(b + s.bytes() <= c.base, "{c} overlaps {b:#x}");
                    }
                    if let Some((&b, _)) = model.range(c.base..).next() {
                        assert!(b >= end, "{c} overlaps {b:#x}");
                    }
                    model.insert(c.base, (size, step, false));
                }
                Err(PmmError::NoMemory { size: s, root_chunks }) => {
                    assert_eq!((s, root_chunks), (size, 6));
                    // It failed only because no aligned free run of that size exists in the
                    // model's view of the pool.
                    let fits = (0..(12 * MIB / size.bytes())).any(|i| {
                        let b = POOL + i * size.bytes();
                        let e = b + size.bytes();
                        model.range(..e).next_back().is_none_or(|(&lb, &(ls, _, _))| lb + ls.bytes() <= b)
                    });
                    assert!(!fits, "NoMemory for {size} though space was free at step {step}");
                    no_memory += 1;
                }
                Err(e) => panic!("unexpected {e}"),
            }
        } else if r < 70 {
            let keys: Vec<u64> = model.iter().filter(|(_, v)| !v.2).map(|(&k, _)| k).collect();
            if let Some(&base) = keys.get(rng.below(keys.len().max(1))) {
                let (size, owner, _) = model[&base];
                p.unpin(GpuChunk { base, size }).unwrap();
                model.insert(base, (size, owner, true));
            }
        } else {
            let keys: Vec<u64> = model.keys().copied().collect();
            let base = keys[rng.below(keys.len())];
            let (size, owner, unpinned) = model.remove(&base).unwrap();
            let c = GpuChunk { base, size };
            assert_eq!(p.owner(c), Ok(owner));
            let want = if unpinned { ChunkState::Allocated } else { ChunkState::TempPinned };
            assert_eq!(p.chunk_state(c), Ok(want));
            p.free(c).unwrap();
            assert_eq!(p.free(c), Err(PmmError::NotAllocated { base, size }));
        }
        if step % 97 == 0 {
            check_invariants(&p);
            let used: u64 = model.values().map(|v| v.0.bytes()).sum();
            let s = p.stats();
            assert_eq!(s.temp_pinned_bytes + s.allocated_bytes, used);
            assert_eq!(s.free_bytes + used, s.root_chunks as u64 * 2 * MIB);
        }
    }
    assert!(no_memory > 0, "the churn should have filled the pool at least once");
    for (&base, &(size, _, _)) in &model {
        p.free(GpuChunk { base, size }).unwrap();
    }
    let s = p.stats();
    assert_eq!(s.free_root_chunks, s.root_chunks);
    assert_eq!(s.free_bytes, s.root_chunks as u64 * 2 * MIB);
    check_invariants(&p);
}

#[test]
fn bad_handles_are_errors() {
    let mut p = pmm(2, None);
    let small = p.alloc(K4, 1).unwrap();
    let other = p.alloc(K4, 2).unwrap();
    let big = p.alloc(M2, 3).unwrap();

    // Unknown base: the root chunk is not held.
    let unknown = GpuChunk { base: POOL + 40 * MIB, size: K64 };
    assert_eq!(p.free(unknown), Err(PmmError::NotAllocated { base: unknown.base, size: K64 }));
    assert_eq!(p.unpin(unknown), Err(PmmError::NotAllocated { base: unknown.base, size: K64 }));
    assert_eq!(p.free(GpuChunk { base: 0, size: M2 }), Err(PmmError::NotAllocated { base: 0, size: M2 }));
    // Misaligned.
    let odd = GpuChunk { base: POOL + 0x800, size: K4 };
    assert_eq!(p.free(odd), Err(PmmError::BadChunk { base: odd.base, size: K4 }));
    let odd = GpuChunk { base: u64::MAX, size: M2 };
    assert_eq!(p.free(odd), Err(PmmError::BadChunk { base: u64::MAX, size: M2 }));
    // Wrong size: a 64K handle over 4K chunks, a 4K handle inside the 2M chunk, a 2M handle
    // over a split root.
    assert_eq!(p.free(GpuChunk { base: POOL, size: K64 }), Err(PmmError::BadChunk { base: POOL, size: K64 }));
    let inside = GpuChunk { base: big.base + 0x1000, size: K4 };
    assert_eq!(p.free(inside), Err(PmmError::BadChunk { base: inside.base, size: K4 }));
    assert_eq!(p.owner(inside), Err(PmmError::BadChunk { base: inside.base, size: K4 }));
    assert_eq!(p.free(GpuChunk { base: POOL, size: M2 }), Err(PmmError::BadChunk { base: POOL, size: M2 }));
    // A free 4K chunk inside a split 64K.
    let free4 = GpuChunk { base: POOL + 0x2000, size: K4 };
    assert_eq!(p.chunk_state(free4), Ok(ChunkState::Free));
    assert_eq!(p.free(free4), Err(PmmError::NotAllocated { base: free4.base, size: K4 }));
    assert_eq!(
        p.unpin(free4),
        Err(PmmError::WrongState {
            base: free4.base,
            size: K4,
            state: ChunkState::Free,
            expected: ChunkState::TempPinned
        })
    );
    assert_eq!(p.owner(free4), Err(PmmError::NotAllocated { base: free4.base, size: K4 }));

    // Unpin twice.
    p.unpin(small).unwrap();
    assert_eq!(
        p.unpin(small),
        Err(PmmError::WrongState {
            base: small.base,
            size: K4,
            state: ChunkState::Allocated,
            expected: ChunkState::TempPinned
        })
    );
    // Double free, also once the chunk merged into a larger free one.
    p.free(small).unwrap();
    assert_eq!(p.free(small), Err(PmmError::NotAllocated { base: small.base, size: K4 }));
    p.free(other).unwrap();
    assert_eq!(p.stats().free_root_chunks, 1, "first root merged whole");
    assert_eq!(p.free(other), Err(PmmError::NotAllocated { base: other.base, size: K4 }));
    assert_eq!(p.unpin(other), Err(PmmError::NotAllocated { base: other.base, size: K4 }));
    p.free(big).unwrap();
    assert_eq!(p.free(big), Err(PmmError::NotAllocated { base: big.base, size: M2 }));
    // Marking needs a live chunk.
    assert_eq!(p.mark_root_chunk_unused(big), Err(PmmError::NotAllocated { base: big.base, size: M2 }));
    // Nothing the errors did changed the books.
    let s = p.stats();
    assert_eq!((s.root_chunks, s.free_root_chunks, s.free_bytes), (2, 2, 4 * MIB));
    check_invariants(&p);

    // Errors say what and where.
    let text =
        PmmError::WrongState { base: 0x2000, size: K4, state: ChunkState::Free, expected: ChunkState::TempPinned }
            .to_string();
    assert_eq!(text, "4K chunk 0x2000 is FREE, expected TEMP_PINNED");
    assert_eq!(PmmError::NotAllocated { base: 0x10000, size: K64 }.to_string(), "64K chunk 0x10000 is not allocated");
    assert!(PmmError::NoMemory { size: M2, root_chunks: 3 }.to_string().contains("3 root chunks"));
    assert!(PmmError::Pinned { root: 0x200000, pinned: 2 }.to_string().contains("0x200000"));
}

#[test]
fn unpin_order_decides_the_victim() {
    let mut p = pmm(4, None);
    let a = p.alloc(M2, 10).unwrap();
    let b = p.alloc(M2, 11).unwrap();
    let c = p.alloc(M2, 12).unwrap();
    // All temp-pinned: nothing to evict.
    assert_eq!(p.pick_root_to_evict(), None);
    for x in [b, a, c] {
        p.unpin(x).unwrap();
    }
    assert_eq!(p.list_roots(RootList::VaBlockUsed), vec![b.base, a.base, c.base]);
    assert_eq!(p.pick_root_to_evict(), Some(EvictionCandidate { root: b.base, kind: VictimKind::Used }));

    // Marking b used again moves it to the tail: a is next.
    p.mark_root_chunk_used(b).unwrap();
    assert_eq!(p.list_roots(RootList::VaBlockUsed), vec![a.base, c.base, b.base]);
    assert_eq!(p.pick_root_to_evict().map(|v| v.root), Some(a.base));

    // An unused root goes first even though it is the most recent.
    p.mark_root_chunk_unused(b).unwrap();
    assert_eq!(p.root_list(b.base), Some(RootList::VaBlockUnused));
    assert_eq!(p.pick_root_to_evict(), Some(EvictionCandidate { root: b.base, kind: VictimKind::Unused }));
    p.mark_root_chunk_unused(c).unwrap();
    assert_eq!(p.list_roots(RootList::VaBlockUnused), vec![b.base, c.base]);
    assert_eq!(p.pick_root_to_evict().map(|v| v.root), Some(b.base));
    // Marked used, it leaves the unused list for the tail of the used one.
    p.mark_root_chunk_used(b).unwrap();
    assert_eq!(p.list_roots(RootList::VaBlockUsed), vec![a.base, b.base]);
    assert_eq!(p.pick_root_to_evict().map(|v| v.root), Some(c.base));

    // A free root is preferred to all of them.
    p.free(a).unwrap();
    assert_eq!(p.root_list(a.base), None);
    assert_eq!(p.pick_root_to_evict(), Some(EvictionCandidate { root: a.base, kind: VictimKind::FreeRoot }));
    assert_eq!(p.release_root(a.base), Ok(()));
    assert_eq!(p.pick_root_to_evict().map(|v| v.root), Some(c.base));
    check_invariants(&p);
}

#[test]
fn roots_with_temp_pinned_chunks_are_never_victims() {
    let mut p = pmm(2, None);
    // Root 0: one allocated 64K and one temp-pinned 64K. Root 1: one allocated 4K.
    let x = alloc_unpinned(&mut p, K64, 1);
    let y = p.alloc(K64, 2).unwrap();
    let z = alloc_unpinned(&mut p, M2, 3);
    assert_eq!((x.root_base(), y.root_base(), z.root_base()), (POOL, POOL, POOL + 2 * MIB));
    // Root 0 is older on the used list, but pinned.
    assert_eq!(p.list_roots(RootList::VaBlockUsed), vec![POOL, POOL + 2 * MIB]);
    assert_eq!(p.pick_root_to_evict().map(|v| v.root), Some(POOL + 2 * MIB));
    // Even when marked unused.
    p.mark_root_chunk_unused(x).unwrap();
    assert_eq!(p.pick_root_to_evict(), Some(EvictionCandidate { root: POOL + 2 * MIB, kind: VictimKind::Used }));
    assert_eq!(p.begin_eviction(POOL), Err(PmmError::Pinned { root: POOL, pinned: 1 }));
    // Unpinning y moves root 0 to the tail of va_block_used (unpin clears the unused mark).
    p.unpin(y).unwrap();
    assert_eq!(p.root_list(POOL), Some(RootList::VaBlockUsed));
    assert_eq!(p.list_roots(RootList::VaBlockUsed), vec![POOL + 2 * MIB, POOL]);
    assert_eq!(p.pick_root_to_evict().map(|v| v.root), Some(POOL + 2 * MIB));
    // Both pinned: nothing.
    p.free(z).unwrap();
    p.release_free_roots();
    let w = p.alloc(K4, 4).unwrap();
    assert_eq!(w.root_base(), POOL, "free space in the held root before a new root");
    assert_eq!(p.pick_root_to_evict(), None);
    check_invariants(&p);
}

#[test]
fn eviction_flow() {
    let mut p = pmm(2, Some(2));
    // Root 0: chunks of owners 7 and 8 (allocated), root 1: one chunk of owner 9.
    let a = alloc_unpinned(&mut p, K64, 7);
    let b = alloc_unpinned(&mut p, K4, 8);
    let c = alloc_unpinned(&mut p, K4, 7);
    let d = alloc_unpinned(&mut p, M2, 9);
    assert_eq!(d.root_base(), POOL + 2 * MIB);
    let victim = p.pick_root_to_evict().unwrap();
    assert_eq!(victim, EvictionCandidate { root: POOL, kind: VictimKind::Used });

    let evicted = p.begin_eviction(victim.root).unwrap();
    assert_eq!(
        evicted,
        vec![
            EvictedChunk { owner: 7, chunk: a },
            EvictedChunk { owner: 8, chunk: b },
            EvictedChunk { owner: 7, chunk: c },
        ]
    );
    assert_eq!((a.base, b.base, c.base), (POOL, POOL + 0x10000, POOL + 0x11000));
    assert!(p.is_evicting(POOL));
    assert_eq!(p.stats().evicting_root_chunks, 1);
    assert_eq!(p.begin_eviction(POOL), Err(PmmError::Evicting { root: POOL }));
    assert_eq!(p.release_root(POOL), Err(PmmError::Evicting { root: POOL }));
    // Nothing lands in the evicting root, though it has free space; root 1 is full and the cap
    // is reached, so every size fails.
    for size in ChunkSize::ALL {
        assert_eq!(p.alloc(size, 1), Err(PmmError::NoMemory { size, root_chunks: 2 }));
    }
    // Nor is it chosen again.
    assert_eq!(p.pick_root_to_evict().map(|v| v.root), Some(POOL + 2 * MIB));
    check_invariants(&p);
    // The owner frees one chunk itself meanwhile; that is fine.
    p.free(b).unwrap();
    check_invariants(&p);

    p.finish_eviction(POOL).unwrap();
    assert!(!p.is_evicting(POOL));
    assert_eq!(p.finish_eviction(POOL), Err(PmmError::NotEvicting { root: POOL }));
    assert_eq!(p.chunk_state(GpuChunk { base: POOL, size: M2 }), Ok(ChunkState::Free));
    assert_eq!(p.free(a), Err(PmmError::NotAllocated { base: a.base, size: K64 }));
    let s = p.stats();
    assert_eq!((s.free_root_chunks, s.evicting_root_chunks, s.free_bytes), (1, 0, 2 * MIB));
    // Allocatable again, for any size.
    assert_eq!(p.alloc(M2, 5).unwrap().base, POOL);
    check_invariants(&p);
}

#[test]
fn eviction_of_a_partly_free_root_lands_new_allocations_elsewhere() {
    let mut p = pmm(3, None);
    let a = alloc_unpinned(&mut p, K64, 1);
    p.begin_eviction(POOL).unwrap();
    // Root 0 has 31 free 64K chunks, but the allocation takes a new root.
    let b = p.alloc(K64, 2).unwrap();
    assert_eq!(b.base, POOL + 2 * MIB);
    let c = p.alloc(K4, 3).unwrap();
    assert_eq!(c.root_base(), POOL + 2 * MIB);
    // Abort: root 0's free space is allocatable again and it is back on the used list.
    p.abort_eviction(POOL).unwrap();
    assert_eq!(p.abort_eviction(POOL), Err(PmmError::NotEvicting { root: POOL }));
    assert_eq!(p.root_list(POOL), Some(RootList::VaBlockUsed));
    assert_eq!(p.owner(a), Ok(1));
    check_invariants(&p);
    let d = p.alloc(K64, 4).unwrap();
    assert_eq!(d.base, POOL + 0x10000, "lowest free 64K, in root 0 again");
    // Root 1 joins the used list at its first unpin, behind root 0.
    p.unpin(b).unwrap();
    assert_eq!(p.list_roots(RootList::VaBlockUsed), vec![POOL, POOL + 2 * MIB]);
    check_invariants(&p);
}

#[test]
fn eviction_of_a_free_root_and_bad_eviction_calls() {
    let mut p = pmm(2, None);
    let a = p.alloc(M2, 1).unwrap();
    p.free(a).unwrap();
    assert_eq!(p.pick_root_to_evict(), Some(EvictionCandidate { root: POOL, kind: VictimKind::FreeRoot }));
    assert_eq!(p.begin_eviction(POOL), Ok(vec![]));
    assert_eq!(p.stats().free_root_chunks, 0);
    assert_eq!(p.pick_root_to_evict(), None);
    // The free root is not used while evicting: a new one is taken.
    let b = p.alloc(M2, 2).unwrap();
    assert_eq!(b.base, POOL + 2 * MIB);
    p.finish_eviction(POOL).unwrap();
    assert_eq!(p.stats().free_root_chunks, 1);
    assert_eq!(p.release_root(b.base), Err(PmmError::RootInUse { root: b.base }));
    assert_eq!(p.release_root(POOL), Ok(()));
    assert_eq!(p.source().held(), 1);
    // Bad roots.
    assert_eq!(p.begin_eviction(POOL), Err(PmmError::NotAllocated { base: POOL, size: M2 }));
    assert_eq!(p.begin_eviction(POOL + 0x1000), Err(PmmError::BadChunk { base: POOL + 0x1000, size: M2 }));
    assert_eq!(p.finish_eviction(u64::MAX), Err(PmmError::BadChunk { base: u64::MAX, size: M2 }));
    assert_eq!(p.abort_eviction(0), Err(PmmError::NotAllocated { base: 0, size: M2 }));
    check_invariants(&p);
}

#[test]
fn evict_and_retry_loop() {
    // What a va_block does on NoMemory: evict the victim, then retry.
    let mut p = pmm(8, Some(2));
    let mut owners_evicted = Vec::new();
    for owner in 0..6u64 {
        let chunk = loop {
            match p.alloc(M2, owner) {
                Ok(c) => break c,
                Err(PmmError::NoMemory { .. }) => {
                    let victim = p.pick_root_to_evict().unwrap();
                    for e in p.begin_eviction(victim.root).unwrap() {
                        owners_evicted.push(e.owner);
                    }
                    p.finish_eviction(victim.root).unwrap();
                }
                Err(e) => panic!("{e}"),
            }
        };
        p.unpin(chunk).unwrap();
    }
    // LRU: each new block evicts the oldest.
    assert_eq!(owners_evicted, vec![0, 1, 2, 3]);
    assert_eq!(p.stats().root_chunks, 2);
    assert_eq!(p.source().held(), 2);
    check_invariants(&p);
}

#[test]
fn cap_gives_no_memory_exactly_at_the_cap() {
    let mut p = pmm(10, Some(3));
    for i in 0..3 {
        assert_eq!(p.alloc(M2, i).unwrap().base, POOL + i * 2 * MIB);
    }
    assert_eq!(p.alloc(M2, 3), Err(PmmError::NoMemory { size: M2, root_chunks: 3 }));
    assert_eq!(p.alloc(K4, 3), Err(PmmError::NoMemory { size: K4, root_chunks: 3 }));
    assert_eq!(p.source().held(), 3);
    assert_eq!(p.source().available(), 7, "the source still had memory");
    // Raising the cap lets one more in.
    p.set_max_root_chunks(Some(4));
    assert!(p.alloc(K4, 3).is_ok());
    assert_eq!(p.alloc(M2, 4), Err(PmmError::NoMemory { size: M2, root_chunks: 4 }));
    // Without a cap the source's end is the limit.
    let mut q = pmm(2, None);
    q.alloc(M2, 0).unwrap();
    q.alloc(K64, 0).unwrap();
    assert_eq!(q.alloc(M2, 0), Err(PmmError::NoMemory { size: M2, root_chunks: 2 }));
    // Small chunks still fit in the split root.
    assert!(q.alloc(K64, 0).is_ok());
    check_invariants(&q);
}

#[test]
fn vram_allocator_adapter() {
    let base = 0x2_0000_0000u64;
    let vram = VramAllocator::new(&[(base, 8 * MIB)], &[]).unwrap();
    let mut p = Pmm::new(VramRootSource::new(vram), None);
    let mut roots = Vec::new();
    for i in 0..4 {
        let c = p.alloc(M2, i).unwrap();
        assert_eq!(c.base % (2 * MIB), 0);
        assert!(c.base >= base && c.base + 2 * MIB <= base + 8 * MIB);
        roots.push(c);
    }
    roots.sort();
    roots.dedup();
    assert_eq!(roots.len(), 4);
    // Exhausted.
    assert_eq!(p.alloc(M2, 9), Err(PmmError::NoMemory { size: M2, root_chunks: 4 }));
    assert_eq!(p.alloc(K4, 9), Err(PmmError::NoMemory { size: K4, root_chunks: 4 }));
    assert_eq!(p.source().vram().stats().free_bytes, 0);
    assert_eq!(p.source().roots_held(), 4);
    for c in &roots {
        p.free(*c).unwrap();
    }
    assert_eq!(p.source().vram().stats().free_bytes, 0, "free roots stay with the PMM");
    assert_eq!(p.release_free_roots(), 4);
    let v = p.source().vram().stats();
    assert_eq!((v.free_bytes, v.allocations, v.free_root_chunks), (8 * MIB, 0, 4));

    // A reserved page spoils one root chunk: only the two clean ones can be roots.
    let vram = VramAllocator::new(&[(0, 6 * MIB)], &[(2 * MIB + 0x1000, 0x1000)]).unwrap();
    let mut p = Pmm::new(VramRootSource::new(vram), None);
    let a = p.alloc(M2, 0).unwrap();
    let b = p.alloc(K4, 0).unwrap();
    assert_eq!((a.base, b.root_base()), (0, 4 * MIB));
    assert_eq!(p.alloc(M2, 0), Err(PmmError::NoMemory { size: M2, root_chunks: 2 }));
    assert!(p.source().vram().is_free(2 * MIB), "the spoiled chunk was left alone");

    // Over a borrowed allocator, which other driver code keeps using.
    let mut vram = VramAllocator::new(&[(0, 4 * MIB)], &[]).unwrap();
    let other = vram.alloc(0x1000, 0).unwrap();
    {
        let mut p = Pmm::new(VramRootSource::new(&mut vram), None);
        assert_eq!(p.alloc(M2, 0).unwrap().base, 2 * MIB, "the split chunk is not a root");
        assert!(matches!(p.alloc(M2, 0), Err(PmmError::NoMemory { .. })));
        let c = GpuChunk { base: 2 * MIB, size: M2 };
        p.free(c).unwrap();
        p.release_root(2 * MIB).unwrap();
    }
    assert_eq!(vram.stats().free_bytes, 4 * MIB - 0x1000);
    vram.free(other).unwrap();
}

/// A source that misbehaves: hands out the same or misaligned bases.
struct BadSource(Vec<u64>);

impl RootChunkSource for BadSource {
    fn alloc_root(&mut self) -> Result<u64, PmmError> {
        self.0.pop().ok_or(PmmError::NoMemory { size: M2, root_chunks: 0 })
    }
    fn free_root(&mut self, _: u64) {}
}

#[test]
fn bad_roots_from_the_source_are_refused() {
    let mut p = Pmm::new(BadSource(vec![u64::MAX - 2 * MIB + 1, 0x1000, 4 * MIB, 4 * MIB]), None);
    assert_eq!(p.alloc(M2, 0).unwrap().base, 4 * MIB);
    assert_eq!(p.alloc(M2, 0), Err(PmmError::BadRoot { base: 4 * MIB }));
    assert_eq!(p.alloc(K4, 0), Err(PmmError::BadRoot { base: 0x1000 }));
    assert_eq!(p.alloc(K64, 0), Err(PmmError::BadRoot { base: u64::MAX - 2 * MIB + 1 }));
    assert_eq!(p.alloc(K64, 0), Err(PmmError::NoMemory { size: K64, root_chunks: 1 }));
    assert_eq!(p.stats().root_chunks, 1);
    check_invariants(&p);
}

#[test]
fn simple_source_bookkeeping() {
    let mut s = SimpleRootSource::new(1, 2);
    assert_eq!(s.alloc_root(), Ok(2 * MIB));
    assert_eq!(s.alloc_root(), Ok(4 * MIB));
    assert!(matches!(s.alloc_root(), Err(PmmError::NoMemory { .. })));
    s.free_root(2 * MIB);
    s.free_root(2 * MIB);
    assert_eq!((s.held(), s.available(), s.bad_frees), (1, 1, 1));
    // Near the top of the address space it stops rather than overflow.
    let s = SimpleRootSource::new(u64::MAX - 5 * MIB, 10);
    assert_eq!(s.available(), 1);
}

#[test]
fn lru_sequence_wrap_keeps_the_order() {
    let mut p = pmm(3, None);
    let a = alloc_unpinned(&mut p, M2, 1);
    let b = alloc_unpinned(&mut p, M2, 2);
    let c = p.alloc(M2, 3).unwrap();
    p.mark_root_chunk_unused(a).unwrap();
    p.next_seq = u64::MAX;
    p.unpin(c).unwrap();
    assert_eq!(p.list_roots(RootList::VaBlockUsed), vec![b.base, c.base]);
    assert_eq!(p.list_roots(RootList::VaBlockUnused), vec![a.base]);
    p.mark_root_chunk_used(b).unwrap();
    assert_eq!(p.list_roots(RootList::VaBlockUsed), vec![c.base, b.base]);
    check_invariants(&p);
}

#[test]
fn root_emptied_during_eviction_is_free_after_abort() {
    let mut p = pmm(2, None);
    let a = alloc_unpinned(&mut p, K4, 1);
    let b = alloc_unpinned(&mut p, K64, 2);
    assert_eq!(p.begin_eviction(POOL).unwrap().len(), 2);
    p.free(a).unwrap();
    p.free(b).unwrap();
    // Merged whole, but not allocatable while evicting.
    assert_eq!(p.chunk_state(GpuChunk { base: POOL, size: M2 }), Ok(ChunkState::Free));
    assert_eq!(p.stats().free_root_chunks, 0);
    assert_eq!(p.root_list(POOL), None);
    check_invariants(&p);
    p.abort_eviction(POOL).unwrap();
    let s = p.stats();
    assert_eq!((s.free_root_chunks, s.va_block_used, s.evicting_root_chunks), (1, 0, 0));
    assert_eq!(p.alloc(M2, 3).unwrap().base, POOL);
    check_invariants(&p);
}
