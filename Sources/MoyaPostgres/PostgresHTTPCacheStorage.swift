import Moya
