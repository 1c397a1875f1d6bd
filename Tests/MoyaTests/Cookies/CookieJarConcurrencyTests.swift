import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Many tasks storing and reading at once leave a jar consistent.
@Suite("Cookie jar: concurrency")
struct CookieJarConcurrencyTests {
    @Test("Concurrent stores, reads, sets and deletes", arguments: CookieBackend.allCases)
    func concurrentUse(_ backend: CookieBackend) async {
        let jar = backend.makeJar()
        let writers = 8
        let perWriter = 40
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    let url = "http://w\(writer).example/"
                    for index in 0..<perWriter {
                        // Sixteen loops at once: the other tests share the cooperative pool.
                        await _Concurrency.Task.yield()
                        jar.store(["k\(index)=\(writer)"], from: url)
                        // A cookie set and deleted through the public API, to race with the others.
                        let temporary = HTTPCookie(properties: [.name: "tmp\(index)", .value: "1", .domain: "w\(writer).example", .path: "/"])!
                        jar.setCookie(temporary)
                        _ = jar.header(for: url)
                        jar.deleteCookie(temporary)
                    }
                }
                group.addTask {
                    for _ in 0..<perWriter {
                        await _Concurrency.Task.yield()
                        _ = jar.cookies
                        _ = jar.cookies(for: CookieJarFixture.url("http://w\(writer).example/"))
                    }
                }
            }
        }
        #expect(jar.cookies.count == writers * perWriter)
        for writer in 0..<writers {
            let header = jar.header(for: "http://w\(writer).example/") ?? ""
            let pairs = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(pairs.count == perWriter)
            #expect(pairs.allSatisfy { $0.hasSuffix("=\(writer)") })
        }
    }
}
