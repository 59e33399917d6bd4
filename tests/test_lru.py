"""The bounded cache under every CFG engine cache: capacity holds, recently read entries stay."""
from constrained.lru import LRUCache


def test_size_never_exceeds_capacity():
    cache = LRUCache(10)
    for i in range(1000):
        cache.put(i, str(i))
        assert len(cache) <= 10
    assert cache.get(999) == "999"
    assert cache.get(0) is None


def test_entries_read_again_survive_eviction():
    cache = LRUCache(8)
    cache.put("hot", 1)
    for i in range(100):
        cache.put(i, i)
        assert cache.get("hot") == 1     # read after every insertion: never evicted


def test_put_keeps_the_stored_value_for_an_equal_key():
    cache = LRUCache(4)
    first = cache.put("k", [1])
    assert cache.put("k", [2]) is first
    cache.put("a", 0)
    cache.put("b", 0)                    # "k" moves to the old generation
    assert cache.put("k", [3]) is first


def test_clear_empties():
    cache = LRUCache(4)
    cache.put(1, 1)
    cache.clear()
    assert len(cache) == 0 and cache.get(1) is None


def test_threads_storing_one_key_share_the_first_value():
    """Without a change of generations, every put of a key returns one value, whichever
    thread stored it first."""
    import sys
    import threading
    cache = LRUCache(1 << 20)
    got: dict = {}
    start = threading.Barrier(4)

    def run(n: int) -> None:
        start.wait()
        got[n] = [cache.put(k, object()) for k in range(20_000)]

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)         # threads switch between any two steps
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    for k in range(20_000):
        assert got[0][k] is got[1][k] is got[2][k] is got[3][k] is cache.get(k)
