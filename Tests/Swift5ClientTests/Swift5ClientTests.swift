// This file is compiled in the Swift 5 language mode (see Package.swift). It is written the way
// a Moya 15 app is, following Moya's documentation: a plain enum target, a plugin class with
// mutable state, completion closures that capture and mutate local state and non-Sendable
// objects. None of that is Sendable, and it must keep compiling, without warnings.
import Foundation
import Moya
import MoyaTestServer
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the targets point; a mutable global, as Swift 5 code may have.
var serviceBaseURL = URL(string: "http://127.0.0.1")!

/// One server for this module's tests, started by the first test that awaits it (a global is
/// made on first use). It also points the mutable global above at itself, exactly once, before
/// any test that awaited it reads the global: tests run in parallel, so setting the global per
/// test raced. It runs until the process ends.
let sharedServer = _Concurrency.Task { () throws -> TestServer in
    let server = try await TestServer.start()
    serviceBaseURL = server.baseURL
    return server
}

enum MyService {
    case zen
    case showUser(id: Int)
    case createUser(firstName: String, lastName: String)
    case missing
}

extension MyService: TargetType {
    var baseURL: URL { return serviceBaseURL }
    var path: String {
        switch self {
        case .zen, .showUser, .createUser:
            return "/echo"
        case .missing:
            return "/status/404"
        }
    }
    var method: Moya.Method {
        switch self {
        case .zen, .showUser, .missing:
            return .get
        case .createUser:
            return .post
        }
    }
    var task: Task {
        switch self {
        case .zen, .missing:
            return .requestPlain
        case .showUser(let id):
            return .requestParameters(parameters: ["id": id], encoding: URLEncoding.queryString)
        case .createUser(let firstName, let lastName):
            return .requestParameters(parameters: ["first_name": firstName, "last_name": lastName], encoding: JSONEncoding.default)
        }
    }
    var validationType: ValidationType { return .successCodes }
    var sampleData: Data { return "Half measures are as bad as nothing at all.".data(using: .utf8)! }
    var headers: [String: String]? { return ["Content-type": "application/json"] }
}

/// A plugin as Moya's documentation writes them: a class with a closure and a counter.
class ActivityCounter: PluginType {
    typealias ActivityClosure = (_ began: Bool, _ target: TargetType) -> Void
    var began = 0
    var ended = 0
    let closure: ActivityClosure

    init(closure: @escaping ActivityClosure) {
        self.closure = closure
    }

    func willSend(_ request: RequestType, target: TargetType) {
        began += 1
        closure(true, target)
    }

    func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        ended += 1
        closure(false, target)
    }
}

/// Some app state a completion updates, not Sendable.
class ViewModel {
    var text = ""
    var errors: [MoyaError] = []
}

@Suite("A Swift 5 client")
struct Swift5ClientTests {
    @Test("The callback API, as Moya's documentation uses it")
    func callbacks() async throws {
        _ = try await sharedServer.value

        var log: [Bool] = []
        let counter = ActivityCounter { began, _ in log.append(began) }
        let requestClosure = { (endpoint: Endpoint, done: MoyaProvider.RequestResultClosure) in
            do {
                var request: URLRequest = try endpoint.urlRequest()
                request.httpShouldHandleCookies = false
                done(.success(request))
            } catch {
                done(.failure(MoyaError.underlying(error)))
            }
        }
        let provider = MoyaProvider<MyService>(requestClosure: requestClosure, callbackQueue: DispatchQueue.global(qos: .utility), plugins: [counter])
        let model = ViewModel()
        var calls = 0

        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            provider.request(.showUser(id: 7)) { result in
                calls += 1
                switch result {
                case .success(let moyaResponse):
                    model.text = (try? moyaResponse.mapString()) ?? ""
                case .failure(let error):
                    model.errors.append(error)
                }
                continuation.resume()
            }
        }
        #expect(calls == 1)
        #expect(model.text.contains("id=7"))

        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            provider.request(.missing) { result in
                if case .failure(let error) = result { model.errors.append(error) }
                continuation.resume()
            }
        }
        #expect(model.errors.count == 1)
        #expect(counter.began == 2)
        #expect(counter.ended == 2)
        #expect(log == [true, false, true, false])
    }

    @Test("Cancelling through the returned Cancellable")
    func cancellable() async throws {
        // The stub builds its URL from the global the server's start writes: waiting for the
        // server orders that read after the write.
        _ = try await sharedServer.value
        let provider = MoyaProvider<MyService>(stubClosure: MoyaProvider.delayedStub(3600))
        // The completion hands its finding to the task through the continuation: a variable
        // captured by both would be written on the callback queue and read in the task.
        let cancelled = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let request: Cancellable = provider.request(.zen, callbackQueue: DispatchQueue.global()) { result in
                if case .failure(let error) = result {
                    continuation.resume(returning: error.isCancelled)
                } else {
                    continuation.resume(returning: false)
                }
            }
            request.cancel()
        }
        #expect(cancelled)
    }
}
