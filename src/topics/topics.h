/*-------------------------------------------------------------------------
 *
 * topics.h
 *		Topics: their filter policies and their subscriptions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef TOPICS_H
#define TOPICS_H

#include "queue.h"

#include "utils/jsonb.h"

/* filter.c: SNS subscription filter policies on a message's headers */
typedef struct HeaderFilter HeaderFilter;

extern HeaderFilter *queue_filter_compile(Jsonb *policy, const char *topic,
										  const char *queue);
extern bool queue_filter_matches(const HeaderFilter *filter, Jsonb *headers);

/* subscriptions.c: finding a topic by name, with its subscriptions */
typedef struct TopicSubscription
{
	int32		queue_id;
	char		queue[QUEUE_NAME_MAX_LEN + 1];
	HeaderFilter *filter;		/* NULL: every message */
} TopicSubscription;

typedef struct TopicInfo
{
	char		name[QUEUE_NAME_MAX_LEN + 1];	/* first: the cache's hash key */
	int32		topic_id;
	int			subscription_count;
	TopicSubscription *subscriptions;	/* in the order of their queues' names */
} TopicInfo;

extern void queue_require_topic_storage(void);
extern const TopicInfo *queue_topic_open(const char *name, LOCKMODE lockmode,
										 int permissions, bool missing_ok);

#endif							/* TOPICS_H */
