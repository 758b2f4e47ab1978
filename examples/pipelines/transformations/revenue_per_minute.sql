-- Revenue per minute of order time, from the streaming table `orders` (orders.py).
-- A minute is final once an order two minutes newer has arrived: the streaming aggregate
-- (append mode) emits it then, once. The watermark is set here, in SQL, because the Python
-- DataFrame's withWatermark is analysed when the flow is defined, before `orders` exists.
CREATE TEMPORARY VIEW revenue_per_minute AS
SELECT
  window(`at`, '1 minute').start AS minute,
  count(*) AS orders,
  sum(amount) AS revenue,
  sort_array(collect_list(`order`)) AS order_ids
FROM STREAM(orders) WATERMARK `at` DELAY OF INTERVAL 2 MINUTES
GROUP BY window(`at`, '1 minute')
