import Foundation
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Endpoint")
struct EndpointTests {
    func endpoint(_ task: Task, url: String = "https://api.example.com/things", method: Moya.Method = .post, headers: [String: String]? = ["Title": "Dominar"])
        -> Endpoint
    {
        Endpoint(url: url, sampleResponseClosure: { .networkResponse(200, Data()) }, method: method, task: task, httpHeaderFields: headers)
    }

    @Test("adding(newHTTPHeaderFields:) merges, new values win; empty keeps old headers")
    func addingHeaders() {
        let base = endpoint(.requestPlain)
        #expect(base.adding(newHTTPHeaderFields: ["Title": "Harvey", "Other": "x"]).httpHeaderFields == ["Title": "Harvey", "Other": "x"])
        #expect(base.adding(newHTTPHeaderFields: [:]).httpHeaderFields == ["Title": "Dominar"])
        #expect(endpoint(.requestPlain, headers: nil).adding(newHTTPHeaderFields: [:]).httpHeaderFields == nil)
    }

    @Test("replacing(task:) keeps everything else")
    func replacingTask() throws {
        let replaced = endpoint(.requestPlain).replacing(task: .requestData(Data("x".utf8)))
        #expect(replaced.url == "https://api.example.com/things")
        #expect(try replaced.urlRequest().httpBody == Data("x".utf8))
    }

    @Test("Four-argument init from the docs compiles, headers nil")
    func fourArgumentInit() throws {
        let target = MyService.zen
        let endpoint = Endpoint(
            url: URL(target: target).absoluteString, sampleResponseClosure: { .networkResponse(200, target.sampleData) }, method: target.method,
            task: target.task)
        #expect(endpoint.httpHeaderFields == nil)
        #expect(try endpoint.urlRequest().allHTTPHeaderFields?.isEmpty ?? true)
    }

    @Test("urlRequest() for plain, data, JSON encodable and custom encoder")
    func simpleTasks() throws {
        let plain = try endpoint(.requestPlain).urlRequest()
        #expect(plain.httpMethod == "POST")
        #expect(plain.url?.absoluteString == "https://api.example.com/things")
        #expect(plain.value(forHTTPHeaderField: "Title") == "Dominar")
        #expect(plain.httpBody == nil)

        #expect(try endpoint(.requestData(Data("d".utf8))).urlRequest().httpBody == Data("d".utf8))

        struct Issue: Encodable {
            let title: String
            let createdAt: Date
        }
        let value = Issue(title: "T", createdAt: Date(timeIntervalSince1970: 0))
        let json = try endpoint(.requestJSONEncodable(value), headers: nil).urlRequest()
        #expect(json.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let object = try #require(try JSONSerialization.jsonObject(with: json.httpBody!) as? [String: Any])
        #expect(object["title"] as? String == "T")
        #expect(object["createdAt"] as? Double == -978307200.0)

        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        let custom = try endpoint(.requestCustomJSONEncodable(value, encoder: encoder), headers: ["Content-Type": "text/json"]).urlRequest()
        #expect(custom.value(forHTTPHeaderField: "Content-Type") == "text/json")
        #expect(try JSONSerialization.jsonObject(with: custom.httpBody!) as? [String: String] == ["title": "T", "created_at": "1970-01-01T00:00:00Z"])
    }

    @Test("urlRequest() for parameter and composite tasks")
    func parameterTasks() throws {
        let query = try endpoint(.requestParameters(parameters: ["a": 1], encoding: URLEncoding.queryString)).urlRequest()
        #expect(query.url?.absoluteString == "https://api.example.com/things?a=1")
        #expect(query.httpBody == nil)

        let composite = try endpoint(.requestCompositeData(bodyData: Data("b".utf8), urlParameters: ["Nemesis": "Harvey"])).urlRequest()
        #expect(composite.url?.query == "Nemesis=Harvey")
        #expect(composite.httpBody == Data("b".utf8))

        let compositeParameters = try endpoint(
            .requestCompositeParameters(bodyParameters: ["k": "v"], bodyEncoding: URLEncoding.httpBody, urlParameters: ["q": "1"]), headers: nil
        ).urlRequest()
        #expect(compositeParameters.url?.query == "q=1")
        #expect(compositeParameters.httpBody == Data("k=v".utf8))
        #expect(compositeParameters.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")

        let form = MultipartForm(parts: [MultipartFormData(provider: .data(Data()), name: "n")])
        let upload = try endpoint(.uploadCompositeMultipartFormData(form, urlParameters: ["u": "2"])).urlRequest()
        #expect(upload.url?.query == "u=2")
        #expect(upload.httpBody == nil)
        let destination: DownloadDestination = { url, _ in (url, []) }
        let download = try endpoint(.downloadParameters(parameters: ["d": "3"], encoding: URLEncoding.queryString, destination: destination)).urlRequest()
        #expect(download.url?.query == "d=3")
    }

    @Test("Errors: invalid URL, composite parameters with a query encoding, unencodable values")
    func errors() throws {
        #expect(throws: MoyaError.self) { try endpoint(.requestPlain, url: "some invalid URL").urlRequest() }
        do {
            _ = try endpoint(.requestPlain, url: "some invalid URL").urlRequest()
        } catch MoyaError.requestMapping(let url) {
            #expect(url == "some invalid URL")
        }
        do {
            _ = try endpoint(.requestCompositeParameters(bodyParameters: [:], bodyEncoding: URLEncoding.queryString, urlParameters: [:])).urlRequest()
            Issue.record("expected an error")
        } catch MoyaError.parameterEncoding(let error) {
            guard case .invalidCompositeBodyEncoding? = error as? ParameterEncodingError else {
                Issue.record("wrong error \(error)")
                return
            }
        }
        struct Failing: Encodable { func encode(to encoder: any Encoder) throws { throw CocoaError(.coderInvalidValue) } }
        do {
            _ = try endpoint(.requestJSONEncodable(Failing())).urlRequest()
            Issue.record("expected an error")
        } catch MoyaError.encodableMapping(let error) {
            #expect((error as? CocoaError)?.code == .coderInvalidValue)
        }
    }

    @Test("Equality: same request equal; body, parameters, headers, encoder, upload source differ")
    func equality() {
        let destinationA: DownloadDestination = { url, _ in (url, []) }
        let destinationB: DownloadDestination = { url, _ in (url.appendingPathComponent("b"), []) }
        #expect(endpoint(.requestData(Data("a".utf8))) == endpoint(.requestData(Data("a".utf8))))
        #expect(endpoint(.requestData(Data("a".utf8))) != endpoint(.requestData(Data("b".utf8))))
        #expect(endpoint(.requestJSONEncodable(["a": 1])) != endpoint(.requestJSONEncodable(["a": 2])))
        #expect(
            endpoint(.requestParameters(parameters: ["a": 1], encoding: URLEncoding.default))
                != endpoint(.requestParameters(parameters: ["a": 2], encoding: URLEncoding.default)))
        #expect(endpoint(.requestPlain, headers: ["A": "1"]) != endpoint(.requestPlain, headers: ["A": "2"]))
        #expect(endpoint(.requestPlain, method: .get) != endpoint(.requestPlain, method: .post))
        let snake = JSONEncoder()
        snake.keyEncodingStrategy = .convertToSnakeCase
        struct V: Encodable { let someKey = 1 }
        #expect(endpoint(.requestCustomJSONEncodable(V(), encoder: JSONEncoder())) != endpoint(.requestCustomJSONEncodable(V(), encoder: snake)))
        #expect(endpoint(.uploadFile(URL(fileURLWithPath: "/a"))) != endpoint(.uploadFile(URL(fileURLWithPath: "/b"))))
        let partA = MultipartFormData(provider: .data(Data("a".utf8)), name: "a")
        let partB = MultipartFormData(provider: .data(Data("b".utf8)), name: "a")
        #expect(endpoint(.uploadMultipartFormData([partA])) != endpoint(.uploadMultipartFormData([partB])))
        #expect(
            endpoint(.uploadCompositeMultipartFormData([partA], urlParameters: ["a": 1]))
                != endpoint(.uploadCompositeMultipartFormData([partA], urlParameters: ["a": 2])))
        #expect(endpoint(.downloadDestination(destinationA)) == endpoint(.downloadDestination(destinationB)))
        #expect(endpoint(.requestPlain, url: "bad url") == endpoint(.requestPlain, url: "bad url"))
        #expect(endpoint(.requestPlain, url: "bad url") != endpoint(.requestPlain))
        var set = Set<Endpoint>()
        set.insert(endpoint(.requestData(Data("a".utf8))))
        set.insert(endpoint(.requestData(Data("a".utf8))))
        #expect(set.count == 1)
    }

    /// A value with enough keys that Linux's encoders write them in varying orders.
    struct Profile: Encodable {
        let name = "Ada", email = "ada@example.com", city = "London", country = "UK"
        let age = 36, score = 9.5, active = true, tags = ["a", "b"], extra = ["k1": 1, "k2": 2, "k3": 3, "k4": 4]
    }

    @Test("Equal JSON-encodable bodies give equal endpoints and equal hashes, every time")
    func jsonEncodableEquality() async {
        let custom = JSONEncoder()
        custom.dateEncodingStrategy = .iso8601
        for iteration in 0..<200 {
            await yieldNow(every: 20, iteration)
            let a = endpoint(.requestJSONEncodable(Profile()))
            let b = endpoint(.requestJSONEncodable(Profile()))
            #expect(a == b)
            #expect(a.hashValue == b.hashValue)
            let c = endpoint(.requestCustomJSONEncodable(Profile(), encoder: custom))
            let d = endpoint(.requestCustomJSONEncodable(Profile(), encoder: custom))
            #expect(c == d)
            #expect(c.hashValue == d.hashValue)
            let parameters: [String: Any] = ["name": "Ada", "email": "ada@example.com", "city": "London", "age": 36, "nested": ["x": 1, "y": 2, "z": 3]]
            let e = endpoint(.requestParameters(parameters: parameters, encoding: JSONEncoding.default))
            let f = endpoint(.requestParameters(parameters: parameters, encoding: JSONEncoding.default))
            #expect(e == f)
            #expect(e.hashValue == f.hashValue)
        }
        // Different values still differ, and raw data bodies are compared byte for byte.
        #expect(endpoint(.requestJSONEncodable(["a": 1, "b": 2])) != endpoint(.requestJSONEncodable(["a": 1, "b": 3])))
        #expect(endpoint(.requestData(Data(#"{"a":1,"b":2}"#.utf8))) != endpoint(.requestData(Data(#"{"b":2,"a":1}"#.utf8))))
    }
}

@Suite("Extension points")
struct ExtensionPointTests {
    /// A user-written encoding: parameters as `key:value` lines in the body.
    struct LinesEncoding: ParameterEncoding {
        func encode(_ urlRequest: URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
            var request = try urlRequest.asURLRequest()
            guard let parameters = parameters else { return request }
            guard !parameters.isEmpty else { throw CocoaError(.coderInvalidValue) }
            request.httpBody = Data(parameters.keys.sorted().map { "\($0):\(parameters[$0]!)" }.joined(separator: "\n").utf8)
            request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            return request
        }
    }

    @Test("A custom ParameterEncoding is used, and its errors become .parameterEncoding")
    func customEncoding() throws {
        let ok = Endpoint(
            url: "http://a/b", sampleResponseClosure: { .networkResponse(200, Data()) }, method: .post,
            task: .requestParameters(parameters: ["b": 2, "a": 1], encoding: LinesEncoding()))
        let request = try ok.urlRequest()
        #expect(request.httpBody == Data("a:1\nb:2".utf8))
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "text/plain")
        let failing = ok.replacing(task: .requestParameters(parameters: [:], encoding: LinesEncoding()))
        do {
            _ = try failing.urlRequest()
            Issue.record("expected an error")
        } catch MoyaError.parameterEncoding(let error) {
            #expect((error as? CocoaError)?.code == .coderInvalidValue)
        }
    }

    final class CountingProvider: MoyaProvider<GitHub>, @unchecked Sendable {
        let stubCalls = Recorder<String>()
        override func stubRequest(
            _ target: GitHub, request: URLRequest, callbackQueue: DispatchQueue?, completion: @escaping Moya.Completion, endpoint: Endpoint,
            stubBehavior: Moya.StubBehavior
        ) -> CancellableToken {
            stubCalls.append(request.url?.path ?? "")
            return super.stubRequest(
                target, request: request, callbackQueue: callbackQueue, completion: completion, endpoint: endpoint, stubBehavior: stubBehavior)
        }
        override func endpoint(_ token: GitHub) -> Endpoint {
            super.endpoint(token).adding(newHTTPHeaderFields: ["X-Overridden": "1"])
        }
    }

    @Test("stubRequest and endpoint can be overridden")
    func overrides() throws {
        let provider = CountingProvider(stubClosure: MoyaProvider.immediatelyStub)
        var result: Result<Moya.Response, MoyaError>?
        provider.request(.zen) { result = $0 }
        #expect(provider.stubCalls.values == ["/zen"])
        #expect(try #require(result).get().request?.value(forHTTPHeaderField: "X-Overridden") == "1")
    }
}
