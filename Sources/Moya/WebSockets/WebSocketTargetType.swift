/// A WebSocket target that can be stubbed: it says what its server does in a scripted
/// conversation, as a ``TargetType`` says with ``TargetType/sampleData`` what its server answers.
///
/// When the provider's stub closure stubs such a target, ``MoyaProvider/webSocket(_:options:)``
/// opens a connection to ``sampleConversation`` instead of the network: the handshake goes
/// through the endpoint and request closures and the plugins as usual (`prepare`, `willSend`,
/// `didReceive` with the `101` or the refusal), then the script plays the server.
///
/// ```swift
/// enum Chat: WebSocketTargetType {
///     case room(String)
///
///     var baseURL: URL { URL(string: "wss://chat.example.com")! }
///     var path: String {
///         switch self {
///         case .room(let name): "/rooms/\(name)"
///         }
///     }
///     var method: Moya.Method { .get }
///     var task: Moya.Task { .requestPlain }
///     var headers: [String: String]? { nil }
///     var sampleConversation: WebSocketScript {
///         .messages([.text("welcome")], thenClose: .normalClosure)
///     }
/// }
///
/// let provider = MoyaProvider<Chat>(stubClosure: MoyaProvider.immediatelyStub)
/// ```
///
/// The endpoint closure can replace the script (``Endpoint/sampleConversation``).
public protocol WebSocketTargetType: TargetType {
    /// What the server does when the target is stubbed.
    var sampleConversation: WebSocketScript { get }
}
