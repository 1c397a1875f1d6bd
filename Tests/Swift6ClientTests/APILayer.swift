// A Moya 15 networking layer compiled in the Swift 6 language mode (CI fails on any warning),
// with nothing but `import Moya`: Foundation and, on Linux, FoundationNetworking come through
// it. It is written as the seed documents and Moya's README write Moya code; where Swift 6
// asks for more (a subclass restating `@unchecked Sendable`, an interceptor's state behind a
// lock), it does what the migration guide says.
import Moya

/// The base URL the targets use; set once, by the start of the tests' shared server, before
/// any request.
nonisolated(unsafe) var apiBaseURL = URL(string: "http://127.0.0.1")!

enum ShopAPI {
    case products(page: Int, tags: [String])
    case product(id: Int)
    case create(name: String, price: Double)
    case uploadPhoto(productID: Int, photo: Data)
    case uploadManual(fileURL: URL)
    case protected
}

extension ShopAPI: TargetType {
    var baseURL: URL { apiBaseURL }
    var path: String {
        switch self {
        case .products, .product, .create: return "/echo"
        case .uploadPhoto, .uploadManual: return "/multipart"
        case .protected: return "/token/rotated"
        }
    }
    var method: Moya.Method {
        switch self {
        case .products, .product, .protected: return .get
        case .create, .uploadPhoto, .uploadManual: return .post
        }
    }
    var task: Task {
        switch self {
        case .products(let page, let tags):
            return .requestParameters(parameters: ["page": page, "tags": tags], encoding: URLEncoding(destination: .queryString, arrayEncoding: .noBrackets))
        case .product:
            return .requestPlain
        case .create(let name, let price):
            return .requestJSONEncodable(NewProduct(name: name, price: price))
        case .uploadPhoto(let productID, let photo):
            let parts = [
                MultipartFormData(provider: .data(photo), name: "photo", fileName: "photo.jpg", mimeType: "image/jpeg"),
                MultipartFormData(provider: .data(Data("\(productID)".utf8)), name: "product"),
            ]
            return .uploadCompositeMultipart(parts, urlParameters: ["draft": true])
        case .uploadManual(let fileURL):
            return .uploadMultipart([MultipartFormData(provider: .file(fileURL), name: "manual", fileName: "manual.pdf", mimeType: "application/pdf")])
        case .protected:
            return .requestPlain
        }
    }
    var headers: [String: String]? { ["Accept": "application/json"] }
    var validationType: ValidationType { .successCodes }
    var sampleData: Data { Data(#"{"id": 1, "name": "Lamp"}"#.utf8) }
}

struct NewProduct: Codable, Sendable {
    let name: String
    let price: Double
}

/// An Endpoint subclass carrying a flag, restating Sendable as Swift asks.
final class ShopEndpoint: Endpoint, @unchecked Sendable {
    let needsAuth: Bool

    init(_ target: ShopAPI) {
        if case .protected = target { needsAuth = true } else { needsAuth = false }
        super.init(
            url: URL(target: target).absoluteString,
            sampleResponseClosure: { .networkResponse(200, target.sampleData) },
            method: target.method,
            task: target.task,
            httpHeaderFields: target.headers)
    }
}

/// The token an interceptor adds, behind a lock.
final class Credentials: @unchecked Sendable {
    private let lock = NSLock()
    private var token = "expired"
    private var refreshes = 0

    var current: String { lock.withLock { token } }
    var refreshCount: Int { lock.withLock { refreshes } }

    func refresh() {
        lock.withLock {
            token = "rotated"
            refreshes += 1
        }
    }
}

/// An interceptor written for Alamofire: `adapt(_:for:completion:)` and
/// `retry(_:for:dueTo:completion:)`.
final class AuthInterceptor: RequestInterceptor {
    let credentials: Credentials

    init(credentials: Credentials) {
        self.credentials = credentials
    }

    func adapt(_ urlRequest: URLRequest, for session: Session, completion: @escaping (Result<URLRequest, Error>) -> Void) {
        var request = urlRequest
        request.headers.update(.authorization(bearerToken: credentials.current))
        completion(.success(request))
    }

    func retry(_ request: Request, for session: Session, dueTo error: Error, completion: @escaping (RetryResult) -> Void) {
        guard let response = request.response, response.statusCode == 401, request.retryCount < 1 else {
            completion(.doNotRetryWithError(error))
            return
        }
        credentials.refresh()
        completion(.retryWithDelay(0.01))
    }
}

/// A trust manager subclass that pins every subdomain of a host, as Alamofire users write them.
final class WildcardTrustManager: ServerTrustManager, @unchecked Sendable {
    override func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
        if host.hasSuffix(".example.com") {
            return try super.serverTrustEvaluator(forHost: "example.com")
        }
        return try super.serverTrustEvaluator(forHost: host)
    }
}

/// A plugin as the seed documents write one, counting what it sees.
final class RequestCounter: PluginType, @unchecked Sendable {
    private let lock = NSLock()
    private var methods: [String] = []

    var seen: [String] { lock.withLock { methods } }

    func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        var request = request
        request.headers.add(name: "X-Request-Counter", value: "1")
        return request
    }

    func willSend(_ request: RequestType, target: TargetType) {
        let method = request.request?.method?.rawValue ?? "?"
        lock.withLock { methods.append(method) }
    }
}

/// The app's logger, kept in a `static let` as apps keep it: in the Swift 6 language mode that
/// compiles without a warning only because `NetworkLoggerPlugin` is `Sendable`.
enum ShopLogging {
    static let plugin = NetworkLoggerPlugin(configuration: .init(output: { _, items in _ = items }, logOptions: .verbose))
}

/// The app's provider: a subclass with its own session, built from a
/// `URLSessionConfiguration` as Moya's documentation shows.
final class ShopProvider: MoyaProvider<ShopAPI>, @unchecked Sendable {
    let credentials = Credentials()
    let counter = RequestCounter()

    init() {
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = 15
        configuration.httpAdditionalHeaders?["X-Client"] = "shop-ios"
        let credentials = self.credentials
        let session = Session(configuration: configuration, startRequestsImmediately: false, interceptor: AuthInterceptor(credentials: credentials))
        super.init(endpointClosure: { ShopEndpoint($0) }, session: session, plugins: [counter, ShopLogging.plugin])
    }
}

extension ShopProvider {
    func pinnedSession(pins: [TLSCertificate]) -> Session {
        let manager = WildcardTrustManager(evaluators: ["example.com": PinnedCertificatesTrustEvaluator(certificates: pins)])
        return Session(configuration: URLSessionConfiguration.default, delegate: SessionDelegate(), serverTrustManager: manager)
    }
}

/// What the echo route answers.
struct Echo: Decodable {
    let method: String
    let uri: String
    let headers: [String: String]
    let body: String?
}

/// The user-facing message for an error, as apps switch over `MoyaError`.
func message(for error: MoyaError) -> String {
    switch error {
    case .statusCode(let response) where response.statusCode == 401: return "Please sign in again."
    case .statusCode(let response): return "Server error \(response.statusCode)."
    case .underlying(let underlying, _):
        if let urlError = underlying as? URLError, urlError.code == .notConnectedToInternet { return "You are offline." }
        return underlying.localizedDescription
    case .objectMapping, .jsonMapping, .stringMapping, .imageMapping, .encodableMapping: return "Unexpected data."
    case .requestMapping, .parameterEncoding: return "Bad request."
    }
}

/// A cancellable written with Moya's token, capturing non-Sendable state.
func makeToken(onCancel: @escaping () -> Void) -> Cancellable {
    CancellableToken { onCancel() }
}

/// A form built directly, with a part's headers spelled as `HTTPHeaders`.
func manualForm() throws -> Data {
    let form = RequestMultipartFormData(boundary: "shop")
    form.append(InputStream(data: Data("raw".utf8)), withLength: 3, headers: ["Content-Disposition": "form-data; name=\"raw\"", "Content-Type": "text/plain"])
    return try form.encode()
}
