import CombineMoya
import Foundation
import Moya
import MoyaTestServer
import Testing

// Compiled in the Swift 5 language mode, like Swift5ClientTests.swift: the async API and the
// publishers used from Swift 5 code. (Combine and Moya both declare `Cancellable`, so a file that
// imports both must qualify it; this one doesn't need it.)
#if canImport(Combine)
import Combine
#else
import OpenCombine
#endif

@Suite("A Swift 5 client, async and Combine")
struct Swift5AsyncClientTests {
    @Test("async/await and publishers from Swift 5 code")
    func asyncAndCombine() async throws {
        _ = try await sharedServer.value
        let provider = MoyaProvider<MyService>(stubClosure: MoyaProvider.immediatelyStub)

        let response = try await provider.request(.zen)
        #expect(try response.mapString() == "Half measures are as bad as nothing at all.")

        var strings: [String] = []
        var finished = false
        let cancellable = provider.requestPublisher(.zen)
            .mapString()
            .sink(
                receiveCompletion: { completion in
                    if case .finished = completion { finished = true }
                }, receiveValue: { strings.append($0) })
        #expect(strings == ["Half measures are as bad as nothing at all."])
        #expect(finished)
        cancellable.cancel()
    }
}
