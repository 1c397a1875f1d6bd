import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How often a request takes its flight's lock, counted in debug builds
/// (``RequestFlight/lockAcquisitions``): a budget per request, and none per body part.
@Suite("The flight's lock: a budget per request")
struct FlightLockBudgetTests {
    let server: TestServer
    init() async throws { server = try await TestServer.start() }

    /// Runs `body` and returns the lock acquisitions of every flight it made.
    private func counting(_ body: () async throws -> Void) async rethrows -> [Int] {
        let flights = Protected<[RequestFlight]>([])
        try await RequestFlight.$madeFlights.withValue(flights) {
            try await body()
        }
        return flights.current.map(\.lockAcquisitions)
    }

    @Test("A plain GET with a completion takes it at most 3 times: built, attempt started, finished")
    func callbackGET() async throws {
        let session = Session()
        let provider = MoyaProvider<Remote>(callbackQueue: .global(), session: session)
        let counts = try await counting {
            for _ in 0..<3 {
                let response = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Moya.Response, any Error>) in
                    provider.request(Remote(server.baseURL, "/echo")) { continuation.resume(with: $0) }
                }
                #expect(response.statusCode == 200)
            }
        }
        #expect(counts.count == 3)
        #expect(counts.allSatisfy { $0 <= 3 }, "\(counts)")
        try await session.shutdown()
    }

    @Test("An awaited GET takes it at most 3 times, as a completion does: the task meets the flight without it")
    func asyncGET() async throws {
        let session = Session()
        let provider = MoyaProvider<Remote>(session: session)
        let counts = try await counting {
            for _ in 0..<3 {
                let response = try await provider.request(Remote(server.baseURL, "/echo"))
                #expect(response.statusCode == 200)
            }
        }
        #expect(counts.count == 3)
        #expect(counts.allSatisfy { $0 <= 3 }, "\(counts)")
        try await session.shutdown()
    }

    @Test("A stream takes it as often for 1 body part as for 64")
    func streamParts() async throws {
        let session = Session()
        let provider = MoyaProvider<Remote>(session: session)
        var perStream: [Int] = []
        for parts in [1, 64] {
            let counts = try await counting {
                let stream = try await provider.stream(Remote.bytes(server.baseURL, parts * 512, chunk: 512, intervalMs: 1))
                var received = 0
                for try await chunk in stream.body { received += chunk.count }
                #expect(received == parts * 512)
            }
            #expect(counts.count == 1)
            perStream += counts
        }
        #expect(perStream.count == 2)
        #expect(Set(perStream).count == 1, "\(perStream)")
        // Built, attempt started, head handed over, ended.
        #expect(perStream.allSatisfy { $0 <= 4 }, "\(perStream)")
        try await session.shutdown()
    }
}
