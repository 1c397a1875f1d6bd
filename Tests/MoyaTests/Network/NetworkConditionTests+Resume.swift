import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension NetworkConditionTests {
    /// The file nginx serves as `name`, from the test network's folder (beside its certificate).
    private func servedFile(_ name: String) throws -> Data {
        let certificate = try #require(Netem.certificatePath)
        return try Data(contentsOf: URL(fileURLWithPath: certificate).deletingLastPathComponent().appendingPathComponent("www/\(name)"))
    }

    @Test("A download cut by a link that went down resumes from nginx with a 206 once the link is back, and the file is whole")
    func resumeAfterOutage() async throws {
        try Netem.run("set", "rate", "2mbit")
        defer {
            try? Netem.run("up")
            try? Netem.run("clear")
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("moya-netem-resume-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let session = try Netem.session(timeout: 2)
        let provider = MoyaProvider<NetemTarget>(session: session)
        let target = try NetemTarget.download("1m.bin", to: folder.appendingPathComponent("1m.bin"))
        let cut = _Concurrency.Task {
            try await _Concurrency.Task.sleep(for: .seconds(1))
            try Netem.run("down")
        }
        var resumeData: Data?
        do throws(MoyaError) {
            _ = try await provider.request(target)
            Issue.record("the download succeeded over a link that went down")
        } catch {
            resumeData = error.resumeData
        }
        try await cut.value
        let data = try #require(resumeData, "nginx sends an ETag: the cut download can be resumed")
        try Netem.run("up")
        let response = try await provider.request(target, resumingWith: data)
        #expect(response.statusCode == 206)
        #expect(try Data(contentsOf: folder.appendingPathComponent("1m.bin")) == servedFile("1m.bin"))
        try await session.shutdown()
    }
}
