import Testing

/// A Swift Testing trait that starts a ``MockServer`` for each test it applies to, makes it
/// ``MockServer/current`` while the test runs, and shuts it down afterwards.
///
/// ```swift
/// @Test(.mockServer())
/// func createsAUser() async throws {
///     let server = try #require(MockServer.current)
///     server.enqueue(.json(#"{"id": 1, "name": "Ann"}"#, status: 201))
///     let provider = MoyaProvider<UserAPI>()
///     let response = try await provider.request(.create(NewUser(name: "Ann"), baseURL: server.baseURL))
///     #expect(response.statusCode == 201)
/// }
/// ```
///
/// On a suite, each of its tests gets a server of its own, so that tests running in parallel
/// never see each other's requests.
public struct MockServerTrait: TestTrait, SuiteTrait, TestScoping {
    /// The configuration each server starts with.
    public var configuration: MockServer.Configuration
    /// Runs on each new server before its test, to script routes and responses.
    public var setup: (@Sendable (MockServer) async throws -> Void)?

    /// On a suite, the trait applies to each test of it.
    public var isRecursive: Bool { true }

    /// Creates the trait; ``Testing/Trait/mockServer(_:setup:)`` reads better.
    public init(configuration: MockServer.Configuration, setup: (@Sendable (MockServer) async throws -> Void)?) {
        self.configuration = configuration
        self.setup = setup
    }

    /// Starts a server for the test (not for a suite as a whole), runs the test with it as
    /// ``MockServer/current``, then shuts it down, also when the test throws.
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil || !test.isSuite else {
            try await function()
            return
        }
        let server = try await MockServer.start(self.configuration)
        do {
            try await self.setup?(server)
            try await MockServer.$current.withValue(server) {
                try await function()
            }
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
}

extension Trait where Self == MockServerTrait {
    /// Starts a ``MockServer`` with `configuration` for each test, available as
    /// ``MockServer/current``; `setup` scripts it before the test runs.
    public static func mockServer(
        _ configuration: MockServer.Configuration = MockServer.Configuration(),
        setup: (@Sendable (MockServer) async throws -> Void)? = nil
    ) -> Self {
        MockServerTrait(configuration: configuration, setup: setup)
    }
}

extension MockServer {
    /// The server the ``Testing/Trait/mockServer(_:setup:)`` trait started for the running test,
    /// or `nil` outside such a test.
    @TaskLocal public static var current: MockServer?
}
