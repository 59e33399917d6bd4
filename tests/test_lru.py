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
