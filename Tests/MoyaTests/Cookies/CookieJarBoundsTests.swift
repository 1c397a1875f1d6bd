import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server cannot make a jar grow without bound: 50 cookies per registrable domain, 3,000 in
/// all, expired ones evicted first, then the least recently used.
@Suite("Cookie jar: bounds")
struct CookieJarBoundsTests {
    @Test("At most 50 cookies per registrable domain; the least recently used goes", arguments: CookieBackend.allCases)
    func perDomainLimit(_ backend: CookieBackend) {
        let jar = backend.makeJar()
        let now = Date()
        for index in 0..<50 {
            jar.store(["c\(index)=1; Path=/p\(index)"], from: "http://www.example.com/", at: now + Double(index))
        }
        #expect(jar.cookies.count == 50)
        // Using c0 makes c1 the least recently used.
        #expect(jar.header(for: "http://www.example.com/p0", at: now + 100) == "c0=1")
        // A subdomain counts in the same registrable domain.
        jar.store(["new=1"], from: "http://api.example.com/", at: now + 101)
        let names = Set(jar.cookies.map(\.name))
        #expect(names.count == 50)
        #expect(names.contains("new"))
        #expect(names.contains("c0"))
        #expect(!names.contains("c1"))
        #expect(names.contains("c2"))
        // Another registrable domain has its own 50.
        jar.store(["other=1"], from: "http://other.example/", at: now + 102)
        #expect(jar.cookies.count == 51)
    }

    @Test("Expired cookies are evicted before live ones", arguments: CookieBackend.allCases)
    func expiredFirst(_ backend: CookieBackend) {
        let jar = backend.makeJar()
        let now = Date()
        for index in 0..<49 {
            jar.store(["c\(index)=1"], from: "http://h.example.com/", at: now + Double(index))
        }
        // The most recently used cookie, but expired by the time the next one arrives.
        jar.store(["short=1; Max-Age=5"], from: "http://h.example.com/", at: now + 100)
        jar.store(["last=1"], from: "http://h.example.com/", at: now + 200)
        let names = Set(jar.cookies.map(\.name))
        #expect(names.count == 50)
        #expect(!names.contains("short"))
        #expect(names.contains("c0"))
        #expect(names.contains("last"))
    }

    @Test("One response with thousands of cookies keeps 50")
    func hostileResponse() {
        let jar = CookieJar()
        let headers = (0..<5_000).map { "flood\($0)=\(String(repeating: "x", count: 100))" }
        jar.store(headers, from: "http://evil.example/")
        #expect(jar.cookies.count == 50)
        #expect(jar.header(for: "http://evil.example/")?.contains("flood4999=") == true)
    }

    /// On the memory backend only: a Foundation storage is read back whole at each insert, which
    /// makes 3,100 inserts into a full one take seconds in a debug build; the limit code is shared.
    @Test("At most 3,000 cookies in all; the least recently used go")
    func totalLimit() {
        let jar = CookieJar()
        let now = Date()
        let sites = 62
        for site in 0..<sites {
            let headers = (0..<50).map { "c\($0)=1" }
            jar.store(headers, from: "http://site\(site).example/", at: now + Double(site))
        }
        let cookies = jar.cookies
        #expect(cookies.count == 3_000)
        // The first sites' cookies, the oldest unused, went; the last site's are all there.
        #expect(jar.header(for: "http://site0.example/") == nil)
        #expect(jar.cookies(for: CookieJarFixture.url("http://site\(sites - 1).example/")).count == 50)
    }
}
