// A small tour of Moya for Linux: a real request to an embedded local server, and a stub.
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
            return try TestServer.start()
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
        case let .createUser(firstName, lastName):
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
var failures = 0

print("Local server on \(DemoAPI.server.baseURL.absoluteString)")

done.enter()
provider.request(.slideshow) { result in
    defer { done.leave() }
    do {
        let slideshow = try result.get().map(Slideshow.self, atKeyPath: "slideshow")
        print("GET /json -> \"\(slideshow.title)\" by \(slideshow.author)")
    } catch {
        print("GET /json failed: \(error.localizedDescription)")
        failures += 1
    }
}
done.wait()

done.enter()
provider.request(.createUser(firstName: "James", lastName: "Potter")) { result in
    defer { done.leave() }
    do {
        let response = try result.get()
        let echo = try response.map(Echo.self)
        print("\(echo.method) \(echo.path) -> \(response.statusCode), server received body \(echo.body ?? "none")")
    } catch {
        print("POST /echo/users failed: \(error.localizedDescription)")
        failures += 1
    }
}
done.wait()

// Stubs need no server: the sample data comes back immediately, synchronously.
stubbingProvider.request(.zen) { result in
    switch result {
    case let .success(response):
        print("Stubbed GET /zen -> \(response.statusCode): \(String(decoding: response.data, as: UTF8.self))")
    case let .failure(error):
        print("Stubbed request failed: \(error)")
        failures += 1
    }
}

try? DemoAPI.server.shutdown()
exit(failures == 0 ? 0 : 1)
