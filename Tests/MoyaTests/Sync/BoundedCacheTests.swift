import Testing

@testable import Moya

/// The bounded dictionary behind the provider's caches of parsed URLs and requests.
@Suite("A bounded cache keeps its newest entries")
struct BoundedCacheTests {
    @Test("The oldest entry goes first, and a key already kept keeps its first value")
    func oldestFirst() {
        let cache = BoundedCache<String, Int>(capacity: 3)
        for (index, key) in ["a", "b", "c"].enumerated() {
            cache.keep(index, for: key)
        }
        cache.keep(99, for: "a")
        #expect(cache.value(for: "a") == 0, "the first value kept for a key stays")
        cache.keep(3, for: "d")
        #expect(cache.count == 3)
        #expect(cache.value(for: "a") == nil, "the oldest entry was forgotten, though it was just read")
        #expect(cache.value(for: "b") == 1)
        #expect(cache.value(for: "d") == 3)
    }

    @Test("A capacity below one keeps one entry")
    func capacityAtLeastOne() {
        let cache = BoundedCache<Int, Int>(capacity: 0)
        cache.keep(1, for: 1)
        cache.keep(2, for: 2)
        #expect(cache.capacity == 1)
        #expect(cache.count == 1)
        #expect(cache.value(for: 2) == 2)
    }

    @Test("Many threads keep and read at once without losing the bound")
    func concurrent() async {
        let cache = BoundedCache<Int, Int>(capacity: 16)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<500 {
                        let key = (worker * 500 + index) % 40
                        if let value = cache.value(for: key) {
                            #expect(value == key * 2)
                        } else {
                            cache.keep(key * 2, for: key)
                        }
                    }
                }
            }
        }
        #expect(cache.count == 16)
    }
}
