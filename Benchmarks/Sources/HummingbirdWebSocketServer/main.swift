// A WebSocket server of another make than the Python `websockets` servers of `.ci/ws-server.py`,
// built on Hummingbird and hummingbird-websocket, for the root package's interoperability tests
// (routes: InteropRoutes; README.md in this folder says how CI uses it).
//
//     .build/debug/HummingbirdWebSocketServer --port <N>      (0: a free port)
//
// It listens on 127.0.0.1, prints `listening on <port>` once it accepts connections, and stops
// cleanly on SIGTERM or SIGINT (open WebSocket connections are closed with 1000).
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWSCompression
import HummingbirdWebSocket
import Logging

var port = 0
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    guard argument == "--port", let value = arguments.popFirst().flatMap({ Int($0) }), (0...65535).contains(value) else {
        FileHandle.standardError.write(Data("usage: HummingbirdWebSocketServer --port <N>  (0 picks a free port)\n".utf8))
        exit(2)
    }
    port = value
}

var logger = Logger(label: "HummingbirdWebSocketServer")
// Quiet unless asked: a test run reads this program's first line of output only.
logger.logLevel = ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .warning

let router = Router()
router.get("/health") { _, _ in "ok" }

let webSocketResponder = InteropRoutes.webSocketRouter().buildResponder()
let configuration = HTTP1WebSocketUpgradeChannel.Configuration(
    ws: WebSocketServerConfiguration(
        maxFrameSize: InteropRoutes.maximumMessageSize,
        extensions: [.perMessageDeflate(maxDecompressedFrameSize: InteropRoutes.maximumMessageSize)]
    )
)
let application = Application(
    router: router,
    server: HTTPServerBuilder { responder in
        PlainRouteChannel(
            base: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: configuration),
            uncompressedPaths: InteropRoutes.uncompressedPaths)
    },
    configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port), serverName: "HummingbirdWebSocketServer"),
    onServerRunning: { [port] channel in
        print("listening on \(channel.localAddress?.port ?? port)")
        fflush(nil)  // all streams: whoever started the server waits for this line
    },
    logger: logger
)
// Stops on SIGTERM and SIGINT (the default signals of `runService`).
try await application.runService()
