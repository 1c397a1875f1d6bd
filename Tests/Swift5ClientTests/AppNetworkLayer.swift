// A networking layer written the way Moya 15 apps write theirs, compiled in the Swift 5
// language mode with nothing but `import Moya`: Foundation (`URL`, `Data`, `JSONDecoder`,
// `DispatchQueue`) and, on Linux, FoundationNetworking (`URLRequest`, `HTTPURLResponse`,
// `URLSessionConfiguration`) come through it, as they do for Moya built as a framework.
import Moya

/// The app's API, as a Moya 15 target.
enum AppAPI {
    case profile(id: Int)
    case avatar(imageData: Data, fileURL: URL, description: String)
    case avatarWithQuery(imageData: Data, userID: Int)
    case secret
}

extension AppAPI: TargetType {
    var baseURL: URL { return serviceBaseURL }
    var path: String {
        switch self {
        case .profile: return "/echo"
        case .avatar, .avatarWithQuery: return "/multipart"
        case .secret: return "/token/fresh-token"
        }
    }
    var method: Moya.Method {
        switch self {
        case .profile, .secret: return .get
        case .avatar, .avatarWithQuery: return .post
        }
    }
    var task: Task {
        switch self {
        case .profile(let id):
            return .requestParameters(parameters: ["id": id], encoding: URLEncoding.default)
        case .avatar(let imageData, let fileURL, let description):
            // Moya 15.0.x multipart: an array of parts.
            let image = MultipartFormData(provider: .data(imageData), name: "image", fileName: "avatar.png", mimeType: "image/png")
            let file = MultipartFormData(provider: .file(fileURL), name: "file")
            let text = MultipartFormData(provider: .data(description.data(using: .utf8)!), name: "description")
            return .uploadMultipart([image, file, text])
        case .avatarWithQuery(let imageData, let userID):
            let image = MultipartFormData(provider: .data(imageData), name: "image", fileName: "a.jpg", mimeType: "image/jpeg")
            return .uploadCompositeMultipart([image], urlParameters: ["user": userID])
        case .secret:
            return .requestPlain
        }
    }
    var headers: [String: String]? { return ["Accept": "application/json"] }
    var sampleData: Data { return Data() }
    // Alamofire asks retriers only about failures: a 401 is one when validation rejects it.
    var validationType: ValidationType { return .successCodes }
}

/// An Endpoint subclass, as some apps keep one to carry extra information.
final class AppEndpoint: Endpoint {
    let isAuthenticated: Bool

    init(target: AppAPI, isAuthenticated: Bool) {
        self.isAuthenticated = isAuthenticated
        super.init(
            url: URL(target: target).absoluteString,
            sampleResponseClosure: { .networkResponse(200, target.sampleData) },
            method: target.method,
            task: target.task,
            httpHeaderFields: target.headers)
    }
}

/// A token store with mutable state behind a lock. Interceptors are called from any thread,
/// so Moya asks for Sendable ones: a class with mutable state restates it as `@unchecked`.
final class TokenStore: @unchecked Sendable {
    private let lock = NSLock()
    private var _token = "stale-token"
    private var _refreshCount = 0

    var token: String {
        lock.lock()
        defer { lock.unlock() }
        return _token
    }

    var refreshCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return _refreshCount
    }

    func refresh() {
        lock.lock()
        defer { lock.unlock() }
        _token = "fresh-token"
        _refreshCount += 1
    }
}

/// An interceptor written the Alamofire way (`Session(interceptor:)`): it adds the token, and
/// on a 401 refreshes it once and retries.
final class TokenInterceptor: RequestInterceptor {
    let store: TokenStore
    let queue = DispatchQueue(label: "token-interceptor")

    init(store: TokenStore) {
        self.store = store
    }

    func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping (Result<URLRequest, Error>) -> Void) {
        var request = urlRequest
        request.headers.add(.authorization(bearerToken: store.token))
        completion(.success(request))
    }

    func retry(_ request: Request, for session: Session, dueTo error: Error, completion: @escaping (RetryResult) -> Void) {
        guard request.response?.statusCode == 401, request.retryCount == 0 else {
            return completion(.doNotRetryWithError(error))
        }
        queue.async {
            self.store.refresh()
            completion(.retry)
        }
    }
}

/// A provider subclass that sets up its own session from a `URLSessionConfiguration`, the
/// recipe of Moya's documentation.
final class AppProvider: MoyaProvider<AppAPI> {
    let store: TokenStore

    init(store: TokenStore = TokenStore(), plugins: [PluginType] = []) {
        self.store = store
        let configuration = URLSessionConfiguration.default
        configuration.headers = .default
        configuration.timeoutIntervalForRequest = 20
        var headers = configuration.headers
        headers.add(name: "X-App-Version", value: "1.2.3")
        configuration.headers = headers
        let session = Session(
            configuration: configuration,
            startRequestsImmediately: false,
            interceptor: TokenInterceptor(store: store))
        super.init(
            endpointClosure: { target in
                AppEndpoint(target: target, isAuthenticated: target.isAuthenticated)
            }, callbackQueue: DispatchQueue.global(qos: .userInitiated), session: session, plugins: plugins)
    }
}

// Moya providers are Sendable; a subclass restates it, as Swift asks of every subclass of an
// `@unchecked Sendable` class.
extension AppProvider: @unchecked Sendable {}
extension AppEndpoint: @unchecked Sendable {}

extension MoyaProvider {
    /// The app's own async wrapper, as apps wrote before Moya had one: it shadows Moya's.
    func request(_ target: Target) async throws -> Moya.Response {
        return try await withCheckedThrowingContinuation { continuation in
            _ = self.request(target, callbackQueue: nil, progress: nil) { result in
                continuation.resume(with: result)
            }
        }
    }
}

extension AppAPI {
    var isAuthenticated: Bool {
        if case .secret = self { return true }
        return false
    }
}

/// Decodes what the echo route sends back.
struct EchoReply: Decodable {
    let method: String
    let uri: String
    let headers: [String: String]
}

func decodeEcho(_ response: Moya.Response) throws -> EchoReply {
    return try JSONDecoder().decode(EchoReply.self, from: response.data)
}

/// A session with certificate pinning, as in Moya's documentation.
func makePinnedSession(certificates: [TLSCertificate]) -> Session {
    let manager = ServerTrustManager(evaluators: ["example.com": PinnedCertificatesTrustEvaluator(certificates: certificates)])
    return Session(configuration: URLSessionConfiguration.default, delegate: SessionDelegate(), serverTrustManager: manager)
}

/// An error switch, as apps write them.
func describe(_ error: MoyaError) -> String {
    switch error {
    case .statusCode(let response): return "status \(response.statusCode)"
    case .underlying(let underlying, _): return "underlying \(underlying.localizedDescription)"
    case .imageMapping, .jsonMapping, .stringMapping, .objectMapping, .encodableMapping: return "mapping"
    case .requestMapping(let url): return "request mapping \(url)"
    case .parameterEncoding(let cause): return "encoding \(cause)"
    }
}
