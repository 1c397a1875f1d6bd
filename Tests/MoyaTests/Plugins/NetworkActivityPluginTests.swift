import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("NetworkActivityPlugin")
struct NetworkActivityPluginTests {
    private func recordingPlugin(_ changes: Recorder<String>) -> NetworkActivityPlugin {
        NetworkActivityPlugin { change, target in
            changes.append("\(change) \(target)")
        }
    }

    @Test("Stubbed requests report began then ended, with the target")
    func stubbed() async {
        let changes = Recorder<String>()
        _ = await sendWithPlugins(GitHub.zen, plugins: [recordingPlugin(changes)], stub: true)
        #expect(changes.values == ["began zen", "ended zen"])
    }

    @Test("Real requests report began then ended, failures included")
    func real() async throws {
        let server = try await TestServer.start()
        let changes = Recorder<String>()
        _ = await sendWithPlugins(Remote(server.baseURL, "/echo"), plugins: [recordingPlugin(changes)])
        _ = await sendWithPlugins(Remote(server.baseURL, "/status/500", validationType: .successCodes), plugins: [recordingPlugin(changes)])
        #expect(changes.values == ["began GET /echo", "ended GET /echo", "began GET /status/500", "ended GET /status/500"])
        await server.shutdown()
    }

    @Test("A requestClosure failure reports nothing; a cancel before sending reports only ended")
    func edges() async throws {
        let changes = Recorder<String>()
        let failing = MoyaProvider<GitHub>(requestClosure: { _, done in done(.failure(.requestMapping("no"))) }, plugins: [recordingPlugin(changes)])
        _ = await send(failing, .zen)
        #expect(changes.values.isEmpty)

        let pending = Recorder<MoyaProvider<GitHub>.RequestResultClosure>()
        let never = MoyaProvider<GitHub>(requestClosure: { _, done in pending.append(done) }, plugins: [recordingPlugin(changes)])
        defer { pending.removeAll() }
        let result: UncheckedResult = await withCheckedContinuation { continuation in
            let token = never.request(.zen, callbackQueue: .global()) { continuation.resume(returning: UncheckedResult($0)) }
            token.cancel()
        }
        #expect(result.result.error?.isCancelled == true)
        #expect(changes.values == ["ended zen"])
    }

    @Test("The change type is Equatable with two cases")
    func changeType() {
        #expect(NetworkActivityChangeType.began != .ended)
        #expect(NetworkActivityChangeType.began == .began)
    }
}
