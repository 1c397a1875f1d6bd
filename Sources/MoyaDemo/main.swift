// A small tour of Moya for Linux: real requests to an embedded local server, and a stub. Each
// step prints what it shows and where its code is.
//
//     swift run MoyaDemo
import Dispatch
import Foundation
import Moya
import MoyaTestServer

/// The demo's API: a slideshow document and an echo endpoint on the local server.
enum DemoAPI: TargetType {
    case slideshow
    case createUser(firstName: String, lastName: String)
    case zen

    static let server: TestServer = {
        do {
            return try TestServer.startBlocking()
        } catch {
            print("Could not start the local server: \(error)")
            exit(1)
        }
    }()

    var baseURL: URL { DemoAPI.server.baseURL }

    var path: String {
        switch self {
        case .slideshow: return "/json"
        case .createUser: return "/echo/users"
        case .zen: return "/zen"
        }
    }

    var method: Moya.Method {
        switch self {
        case .createUser: return .post
        default: return .get
        }
    }

    var task: Task {
        switch self {
        case .createUser(let firstName, let lastName):
            return .requestParameters(parameters: ["first_name": firstName, "last_name": lastName], encoding: JSONEncoding.default)
        default:
            return .requestPlain
        }
    }

    var sampleData: Data {
        Data("Half measures are as bad as nothing at all.".utf8)
    }

    var validationType: ValidationType { .successCodes }

    var headers: [String: String]? { ["Accept": "application/json"] }
}

struct Slideshow: Decodable {
    let author: String
    let title: String
}

struct Echo: Decodable {
    let method: String
    let path: String
    let body: String?
}

let queue = DispatchQueue(label: "demo.callbacks")
let provider = MoyaProvider<DemoAPI>(callbackQueue: queue)
let stubbingProvider = MoyaProvider<DemoAPI>(stubClosure: MoyaProvider.immediatelyStub)
let done = DispatchGroup()
let failures = Failures()

/// Counts the steps that did not see what they expected; completions run on `queue`.
final class Failures: @unchecked Sendable {
    // Safe: every read and write holds `lock`.
    private let lock = NSLock()
    private var count = 0

    func record(_ message: String) {
        print("  FAILED: \(message)")
        lock.withLock { count += 1 }
    }

    var total: Int { lock.withLock { count } }
}

/// Prints a step's title, what it shows, and where its code is.
func announce(_ number: Int, _ title: String, shows: String, code: String) {
    print("\nStep \(number): \(title)")
    print("  Shows: \(shows)")
    print("  Code:  \(code)")
}

print("MoyaDemo: Moya for Linux against a local server on \(DemoAPI.server.baseURL.absoluteString)")
print("(the server is MoyaTestServer, started in-process; the API is `enum DemoAPI` in Sources/MoyaDemo/main.swift)")

announce(
    1, "GET /json, decoded at a key path",
    shows:
        "a TargetType case sent through MoyaProvider; the callback runs on the provider's callbackQueue; Response.map(_:atKeyPath:) decodes the \"slideshow\" object",
    code: "Sources/MoyaDemo/main.swift, the `provider.request(.slideshow)` call"
)
done.enter()
provider.request(.slideshow) { result in
    defer { done.leave() }
    do {
        let slideshow = try result.get().map(Slideshow.self, atKeyPath: "slideshow")
        print("  -> \"\(slideshow.title)\" by \(slideshow.author)")
    } catch {
        failures.record("GET /json: \(error.localizedDescription)")
    }
}
done.wait()

announce(
    2, "POST /echo/users with a JSON body",
    shows: "Task.requestParameters with JSONEncoding: the server echoes the method, path and body it received",
    code: "Sources/MoyaDemo/main.swift, `DemoAPI.task` and the `.createUser` request"
)
done.enter()
provider.request(.createUser(firstName: "James", lastName: "Potter")) { result in
    defer { done.leave() }
    do {
        let response = try result.get()
        let echo = try response.map(Echo.self)
        print("  -> HTTP \(response.statusCode); the server received \(echo.method) \(echo.path) with body \(echo.body ?? "none")")
    } catch {
        failures.record("POST /echo/users: \(error.localizedDescription)")
    }
}
done.wait()

announce(
    3, "a stubbed GET /zen",
    shows:
        "stubClosure: MoyaProvider.immediatelyStub answers with the target's sampleData without touching the network; with no callbackQueue an immediate stub completes inside request(_:)",
    code: "Sources/MoyaDemo/main.swift, `stubbingProvider` and `DemoAPI.sampleData`"
)
stubbingProvider.request(.zen) { result in
    switch result {
    case .success(let response):
        print("  -> HTTP \(response.statusCode): \(String(decoding: response.data, as: UTF8.self))")
    case .failure(let error):
        failures.record("stubbed GET /zen: \(error)")
    }
}

DemoAPI.server.shutdownBlocking()
if failures.total == 0 {
    print("\nAll steps passed. For a client to copy (plugins, task groups, a download with a progress bar, retry), see Examples/HTTPBinClient.")
    exit(0)
}
print("\n\(failures.total) step(s) failed.")
exit(1)
