import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local's own server, listening on 127.0.0.1 only.
 *
 * <p>Its command line has no host option and its Jetty server listens on every interface,
 * where anyone who reaches the machine could read and write the table with any credentials.
 * This builds the server from the same arguments, points its connectors at the loopback
 * address before they open, and runs it.
 */
public final class LoopbackDynamoDBLocal {
    private static final String LOOPBACK = "127.0.0.1";

    private LoopbackDynamoDBLocal() {}

    public static void main(String[] args) throws Exception {
        DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server server = (Server) field.get(proxy);
        for (Connector connector : server.getConnectors()) {
            ((ServerConnector) connector).setHost(LOOPBACK);
        }
        proxy.start();
        proxy.join();
    }
}
